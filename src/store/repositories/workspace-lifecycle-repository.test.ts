// The workspace lifecycle's rows on both engines: ports distinct between live workspaces, stable for one
// workspace, released with it (and with its row); setup outcomes per place; approvals by content hash.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../../test/helpers/store-engines.js'
import type { Store } from '../store.js'
import { firstFreeBlock } from './workspace-lifecycle-repository.js'

describe('firstFreeBlock', () => {
  it('finds the first gap long enough, or nothing when the range is full', () => {
    expect(firstFreeBlock([], 3, { from: 10, to: 20 })).toBe(10)
    expect(firstFreeBlock([10, 11, 13], 1, { from: 10, to: 20 })).toBe(12)
    expect(firstFreeBlock([10, 11, 13], 2, { from: 10, to: 20 })).toBe(14)
    expect(firstFreeBlock([5, 12], 2, { from: 10, to: 20 })).toBe(10)
    expect(firstFreeBlock([10, 15], 5, { from: 10, to: 20 })).toBeUndefined()
  })
})

describe.each(STORE_ENGINES)('workspace lifecycle repository ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let userId: string

  beforeEach(async () => {
    testStore = await engine.open()
    store = testStore.store
    userId = (await store.users.create({ name: 'alice', role: 'owner' })).id
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  const workspace = async (name: string) =>
    (
      await store.forUser(userId).workspaces.create({
        kind: 'worktree',
        path: `/tmp/ws/${name}`,
        projectPath: '/tmp/project',
      })
    ).id

  it('gives live workspaces distinct ports, the same block again, and frees them on release', async () => {
    const repository = store.workspaceLifecycle
    const range = { from: 30_000, to: 30_010 }
    const one = await workspace('one')
    const two = await workspace('two')
    const first = await repository.allocatePorts(one, 3, range)
    const second = await repository.allocatePorts(two, 3, range)
    expect(first).toEqual({ first: 30_000, count: 3 })
    expect(second).toEqual({ first: 30_003, count: 3 })
    // Stable: asking again (a restart) answers the stored block.
    expect(await repository.allocatePorts(one, 3, range)).toEqual(first)
    expect(await repository.portsOf(two)).toEqual(second)
    // Full: a block that does not fit is none.
    expect(await repository.allocatePorts(await workspace('three'), 5, range)).toBeUndefined()
    await repository.releasePorts(one)
    expect(await repository.portsOf(one)).toBeUndefined()
    expect(await repository.allocatePorts(await workspace('four'), 2, range)).toEqual({
      first: 30_000,
      count: 2,
    })
  })

  it('keeps ports distinct when two allocations race', async () => {
    const range = { from: 31_000, to: 31_100 }
    const ids = await Promise.all(['a', 'b', 'c', 'd'].map(workspace))
    const blocks = await Promise.all(ids.map((id) => store.workspaceLifecycle.allocatePorts(id, 2, range)))
    const ports = blocks.flatMap((block) => [block!.first, block!.first + 1])
    expect(new Set(ports).size).toBe(8)
  })

  it('records setup outcomes per workspace and place, replacing the previous one', async () => {
    const repository = store.workspaceLifecycle
    const id = await workspace('setup')
    await repository.recordSetup({
      workspaceId: id,
      target: 'local',
      dir: '/tmp/ws/setup',
      status: 'failed',
      exitCode: 3,
      commandHash: 'h1',
    })
    await repository.recordSetup({
      workspaceId: id,
      target: 'local',
      dir: '/tmp/ws/setup',
      status: 'succeeded',
      exitCode: 0,
      commandHash: 'h1',
    })
    await repository.recordSetup({
      workspaceId: id,
      target: 'box',
      dir: '/srv/ws',
      status: 'succeeded',
      exitCode: 0,
      commandHash: 'h1',
    })
    const setups = await repository.setups(id)
    expect(setups.map((setup) => [setup.target, setup.status, setup.exitCode])).toEqual([
      ['box', 'succeeded', 0],
      ['local', 'succeeded', 0],
    ])
  })

  it('stores one approval per project, replaced by the next', async () => {
    const repository = store.workspaceLifecycle
    expect(await repository.approval('shop')).toBeUndefined()
    await repository.approve('shop', 'hash-1', userId)
    await repository.approve('shop', 'hash-2', userId)
    expect(await repository.approval('shop')).toMatchObject({ contentHash: 'hash-2', approvedBy: userId })
  })
})
