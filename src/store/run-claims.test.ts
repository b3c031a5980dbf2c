// Claiming queued runs under a per-agent limit, as several schedulers (on several nodes) do at once: one
// winner per run, and never more active runs of an agent than its limit, whatever the interleaving.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { Store } from './store.js'

describe.each(STORE_ENGINES)('run claims ($name)', (engine) => {
  let testStore: TestStore
  let store: Store

  beforeEach(async () => {
    testStore = await engine.open()
    store = testStore.store
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  it('holds an agent limit and gives each run one owner when many claims race', async () => {
    const user = await store.users.create({ name: 'owner', role: 'owner' })
    const runs = store.forUser(user.id).runs
    const queued = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        runs.create({
          agent: index % 2 ? 'reviewer' : 'coder',
          adapter: 'builtin',
          prompt: `p${index}`,
          cwd: '/w',
        }),
      ),
    )
    // Three "nodes" each try every run, all at once.
    const attempts = ['a', 'b', 'c'].flatMap((node) =>
      queued.map((run) =>
        runs.claimQueued(
          run.id,
          { node, pid: 1, bootId: node },
          {
            agent: run.agent,
            max: run.agent === 'reviewer' ? 2 : 3,
          },
        ),
      ),
    )
    const won = (await Promise.all(attempts)).filter((run) => run !== undefined)
    expect(new Set(won.map((run) => run.id)).size).toBe(won.length)
    expect(won.filter((run) => run.agent === 'reviewer')).toHaveLength(2)
    expect(won.filter((run) => run.agent === 'coder')).toHaveLength(3)
    // A slot frees when a run ends; then one more may start.
    await runs.update(won[0]!.id, { status: 'succeeded' })
    const next = queued.find(
      (run) => run.agent === won[0]!.agent && !won.some((taken) => taken.id === run.id),
    )!
    const limit = { agent: next.agent, max: next.agent === 'reviewer' ? 2 : 3 }
    expect(await runs.claimQueued(next.id, { node: 'a', pid: 1, bootId: 'a' }, limit)).toBeDefined()
    expect(await runs.claimQueued(next.id, { node: 'b', pid: 1, bootId: 'b' }, limit)).toBeUndefined()
  })

  // Issue 17 item 11: a profile made in the UI or API belongs to its user, so its concurrency counts that
  // user's runs only; another user's profile of the same name neither takes nor frees its slots.
  it("counts only the claiming user's runs of the agent for a per-user limit, under races", async () => {
    const alice = await store.users.create({ name: 'alice', role: 'member' })
    const bob = await store.users.create({ name: 'bob', role: 'member' })
    const create = (userId: string) =>
      store.forUser(userId).runs.create({ agent: 'helper', adapter: 'builtin', prompt: 'p', cwd: '/w' })
    const queued = [
      ...(await Promise.all([1, 2, 3, 4].map(() => create(alice.id)))).map((run) => ({ run, user: alice })),
      ...(await Promise.all([1, 2, 3].map(() => create(bob.id)))).map((run) => ({ run, user: bob })),
    ]
    const limit = { agent: 'helper', max: 2, perUser: true }
    const attempts = ['a', 'b'].flatMap((node) =>
      queued.map(({ run, user }) =>
        store.forUser(user.id).runs.claimQueued(run.id, { node, pid: 1, bootId: node }, limit),
      ),
    )
    const won = (await Promise.all(attempts)).filter((run) => run !== undefined)
    const owners = won.map((run) => queued.find((entry) => entry.run.id === run.id)!.user.name)
    expect(owners.filter((name) => name === 'alice')).toHaveLength(2)
    expect(owners.filter((name) => name === 'bob')).toHaveLength(2)
    // A shared limit (hangar.yaml's profiles, bare adapters) still counts every user's runs.
    const third = queued.find(({ run, user }) => user === bob && !won.some((taken) => taken.id === run.id))!
    expect(
      await store
        .forUser(bob.id)
        .runs.claimQueued(third.run.id, { node: 'a', pid: 1, bootId: 'a' }, { agent: 'helper', max: 4 }),
    ).toBeUndefined()
  })

  it('offers a node only the queued runs pinned to it or to no node', async () => {
    const user = await store.users.create({ name: 'owner', role: 'owner' })
    const runs = store.forUser(user.id).runs
    const create = (pinnedNode: string | null) =>
      runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/w', pinnedNode })
    const onA = await create('a')
    const onB = await create('b')
    const anywhere = await create(null)
    expect((await store.runQueue.queued('a')).map((run) => run.id)).toEqual([onA.id, anywhere.id])
    expect((await store.runQueue.queued('b')).map((run) => run.id)).toEqual([onB.id, anywhere.id])
    expect((await store.runQueue.queuedPinnedTo('b')).map((run) => run.id)).toEqual([onB.id])
  })
})
