// Issue 17 item 11: profiles made in the UI or API ignored `concurrency`. The scheduler read the limit from
// hangar.yaml only, so a stored profile always got 1 slot, and the slot was counted over every user's runs
// of that name: one member's run of their "helper" held back another user's "helper". Now a stored
// profile's concurrency applies like a hangar.yaml one, counted over its own user's runs, on both engines.
// The runtime runs in this process with its scheduler; the agent is the fake Cursor CLI.
import { execFileSync } from 'node:child_process'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { Run } from '../../src/store/repositories/runs-repository.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { cleanEnv } from '../helpers/hangar-cli.js'
import { maxOverlap } from '../helpers/run-overlap.js'
import { freshPostgresUrl, makeTempDir, STORE_ENGINES } from '../helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')
const ENDED = ['succeeded', 'failed', 'cancelled', 'interrupted']

describe.each(STORE_ENGINES)(
  'profiles made in the UI or API: concurrency ($name)',
  { timeout: 120_000 },
  (engine) => {
    let root: string
    let runtime: Runtime
    let member: User

    beforeAll(async () => {
      root = await makeTempDir('hangar-user-concurrency-')
      const project = path.join(root, 'project')
      await mkdir(project)
      execFileSync('git', ['init', '-q'], { cwd: project })
      execFileSync(
        'git',
        ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init'],
        {
          cwd: project,
        },
      )
      runtime = await createRuntime({
        dataDir: path.join(root, 'data'),
        databaseUrl: engine.name === 'postgres' ? await freshPostgresUrl({ migrated: true }) : undefined,
        config: parseConfig('server: { maxConcurrentRuns: 8 }\n'),
        projectDir: project,
        env: cleanEnv({
          PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
          HOME: root,
          FAKE_CURSOR_DELAY_MS: '400',
        }),
        logLevel: 'silent',
      })
      member = await runtime.store.users.create({ name: 'member', role: 'member' })
      runtime.scheduler.start(200)
    })

    afterAll(async () => {
      await runtime?.scheduler.stop()
      await runtime?.close()
      if (root) await rm(root, { recursive: true, force: true })
    })

    /** What the profile routes store for POST /api/profiles. */
    const makeProfile = (user: User, name: string, concurrency: number) =>
      runtime.store.forUser(user.id).profiles.put(name, { adapter: 'cursor-agent', concurrency })

    const submit = (user: User, agent: string, prompt: string) =>
      runtime.submitRun(user.id, { agent, prompt, isolate: true })

    async function waitFor(user: User, ids: string[], done: (runs: Run[]) => boolean): Promise<Run[]> {
      const deadline = Date.now() + 60_000
      for (;;) {
        const runs = await Promise.all(
          ids.map(async (id) => (await runtime.store.forUser(user.id).runs.get(id))!),
        )
        if (done(runs)) return runs
        if (Date.now() > deadline)
          throw new Error(`gave up waiting: ${runs.map((run) => run.status).join(', ')}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }

    it('never overlaps three queued runs of a profile with concurrency 1', async () => {
      await makeProfile(member, 'solo', 1)
      const ids = [(await submit(member, 'solo', 'one')).id]
      ids.push((await submit(member, 'solo', 'two')).id, (await submit(member, 'solo', 'three')).id)
      const runs = await waitFor(member, ids, (all) => all.every((run) => ENDED.includes(run.status)))
      expect(runs.map((run) => run.status)).toEqual(['succeeded', 'succeeded', 'succeeded'])
      expect(maxOverlap(runs)).toBe(1)
    })

    it("runs as many at once as the profile's concurrency allows, and no more", async () => {
      await makeProfile(member, 'pair', 2)
      const ids: string[] = []
      for (const prompt of ['HANG=1 a', 'HANG=1 b', 'HANG=1 c'])
        ids.push((await submit(member, 'pair', prompt)).id)
      const runs = await waitFor(
        member,
        ids,
        (all) => all.filter((run) => run.status === 'running').length === 2,
      )
      // Two hold the profile's two slots and never end by themselves: the third cannot have been claimed.
      expect(runs.map((run) => run.status).sort()).toEqual(['queued', 'running', 'running'])
      for (const id of ids) await runtime.scheduler.cancel(member.id, id)
    })

    it("counts a profile's slots over its own user's runs only", async () => {
      await makeProfile(runtime.owner, 'helper', 1)
      await makeProfile(member, 'helper', 1)
      const owners = [(await submit(runtime.owner, 'helper', 'HANG=1 owner')).id]
      await waitFor(runtime.owner, owners, (runs) => runs[0]!.status === 'running')
      const members = [(await submit(member, 'helper', 'HANG=1 member')).id]
      // The owner's run holds the owner's "helper" slot; the member's "helper" has its own.
      await waitFor(member, members, (runs) => runs[0]!.status === 'running')
      await runtime.scheduler.cancel(runtime.owner.id, owners[0]!)
      await runtime.scheduler.cancel(member.id, members[0]!)
    })
  },
)
