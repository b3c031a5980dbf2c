// An SSH run whose node died was marked `interrupted` by another node once the lease ran out, and its
// agent's changes stayed on the host for good: nothing recorded what was shipped, so nothing could bring
// them back. Against a real OpenSSH server on loopback, on both store engines: the shipped state is
// recorded before the agent starts, the node that takes over leaves the finalize pending (it has not the
// files), and the dead node's recovery brings the work back when it starts again — with an event.
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { gitIn } from '../../test/helpers/git-fixture.js'
import { startSshd, type TestSshd } from '../../test/helpers/sshd.js'
import { makeTempDir, STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { HangarConfig } from '../core/config.js'
import { silentLogger } from '../core/logger.js'
import { createRedactor } from '../core/redact.js'
import type { Store } from '../store/store.js'
import { createSshTargets, type SshTargets } from '../workspaces/ssh/ssh-targets.js'
import { shipWorkspace } from '../workspaces/ssh/workspace-sync.js'
import { createFinalizeRecovery } from './finalize-recovery.js'
import { createRunFinalizer } from './finalize-run.js'
import { createNodeHeartbeat } from './node-heartbeat.js'
import { createRunService } from './run-service.js'

let sshd: TestSshd
let scratch: string

beforeAll(async () => {
  sshd = await startSshd()
  scratch = await makeTempDir('hangar-recovery-')
})

afterAll(async () => {
  await sshd?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

describe.each(STORE_ENGINES)('finalize recovery ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let targets: SshTargets
  let now: Date

  beforeEach(async () => {
    testStore = await engine.open()
    store = testStore.store
    now = new Date()
    const config = {
      targets: {
        box: {
          ssh: `${sshd.user}@127.0.0.1`,
          dir: path.join(scratch, `host-${engine.name}`),
          port: sshd.port,
          identityFile: sshd.identityFile,
        },
      },
    } as unknown as Pick<HangarConfig, 'targets'>
    targets = createSshTargets(config, { HANGAR_SSH_COMMAND: sshd.sshCommand })
  })
  afterEach(async () => {
    await targets.close()
    await testStore.dispose()
  })

  const nodeOf = (id: string, bootId: string) => {
    const runs = createRunService({
      store,
      redactor: createRedactor(),
      owner: { node: id, pid: process.pid, bootId },
    })
    const finalizeRun = createRunFinalizer({ store, targets, runs })
    const recovery = createFinalizeRecovery({ store, finalizeRun, node: id, log: silentLogger })
    const heartbeat = createNodeHeartbeat({
      store,
      runs,
      node: { id, bootId, version: '0.0.0', startedAt: now },
      heartbeatMs: 60_000,
      leaseMs: 3000,
      clock: () => now,
      log: silentLogger,
    })
    return { runs, finalizeRun, recovery, heartbeat }
  }

  it('brings back the work of a run another node interrupted after the lease, when its own node restarts', async () => {
    const owner = await store.users.create({ name: 'owner', role: 'owner' })
    const local = path.join(scratch, `project-${engine.name}`)
    await mkdir(local, { recursive: true })
    gitIn(local, 'init', '-q', '-b', 'main')
    await writeFile(path.join(local, 'README.md'), '# project\n')
    gitIn(local, 'add', '-A')
    gitIn(local, 'commit', '-qm', 'initial')

    const a = nodeOf('node-a', 'boot-a1')
    const b = nodeOf('node-b', 'boot-b1')
    await a.heartbeat.start('http://a')
    await b.heartbeat.start('http://b')
    const active = await a.runs.start(owner.id, {
      agent: 'remote',
      adapter: 'claude-code',
      prompt: 'p',
      cwd: local,
    })
    await active.setStatus('running')
    const { shipped } = await shipWorkspace(targets.get('box'), local, { runId: active.run.id })
    await active.recordShipped(shipped)
    expect((await store.forUser(owner.id).runs.get(active.run.id))?.workspaceFinalize).toBe('pending')
    // The agent's work, on the host only; then node a falls silent.
    await writeFile(path.join(shipped.remoteDir, 'agent.txt'), 'from the host\n')

    now = new Date(now.getTime() + 5000)
    expect(await b.heartbeat.beat()).toBe(1)
    const interrupted = (await store.forUser(owner.id).runs.get(active.run.id))!
    expect(interrupted.status).toBe('interrupted')
    expect(interrupted.workspaceFinalize).toBe('pending')
    const events = await store.forUser(owner.id).runs.listEvents(active.run.id)
    expect(events.find((event) => event.type === 'error')).toMatchObject({
      code: 'workspace_finalize_pending',
      retryable: true,
    })
    // Node b has not the files: its recovery leaves the run alone.
    expect(await b.recovery.sweep()).toBe(0)
    expect(existsSync(path.join(local, 'agent.txt'))).toBe(false)
    // While it is pending, no run starts on the workspace.
    await expect(
      b.runs.start(owner.id, { agent: 'local', adapter: 'claude-code', prompt: 'p', cwd: local }),
    ).rejects.toThrow(`hangar runs finalize ${active.run.id}`)

    // Node a starts again.
    const restarted = nodeOf('node-a', 'boot-a2')
    expect(await restarted.recovery.sweep()).toBe(1)
    expect(await readFile(path.join(local, 'agent.txt'), 'utf8')).toBe('from the host\n')
    const recovered = (await store.forUser(owner.id).runs.get(active.run.id))!
    expect(recovered).toMatchObject({ status: 'interrupted', workspaceFinalize: 'ok', workspaceSync: null })
    const log = await store.forUser(owner.id).runs.listEvents(active.run.id)
    expect(log.at(-1)).toMatchObject({ type: 'finalize-end', finalize: 'ok', status: 'interrupted' })
    expect(await restarted.recovery.sweep()).toBe(0)
    await a.heartbeat.stop()
    await b.heartbeat.stop()
  })

  it('refuses to finalize a run whose owner is alive, and leaves a failed attempt retryable', async () => {
    const owner = await store.users.create({ name: 'owner', role: 'owner' })
    const runs = store.forUser(owner.id).runs
    const created = await runs.create({ agent: 'remote', adapter: 'claude-code', prompt: 'p', cwd: '/gone' })
    // Claimed by another live process of this node (sshd's pid stands for it).
    await runs.claimQueued(created.id, { node: 'node-a', pid: sshd.pid, bootId: 'boot-other' })
    const shipped = { target: 'box', key: 'k', kind: 'git', localDir: path.join(scratch, 'nowhere') }
    await runs.update(created.id, { status: 'running', workspaceSync: shipped, workspaceFinalize: 'pending' })
    const a = nodeOf('node-a', 'boot-a1')
    await expect(a.finalizeRun(owner.id, created.id)).rejects.toMatchObject({ code: 'conflict' })
    expect((await runs.get(created.id))?.status).toBe('running')

    // Once it ended, a finalize that cannot apply anything fails, says why, and stays retryable by hand.
    await runs.update(created.id, { status: 'interrupted' })
    await expect(a.finalizeRun(owner.id, created.id)).rejects.toThrow(/is gone/)
    const failed = (await runs.get(created.id))!
    expect(failed).toMatchObject({ workspaceFinalize: 'failed', status: 'interrupted' })
    expect(failed.finalizeReason).toContain('is gone')
    expect((await runs.listEvents(created.id)).at(-1)).toMatchObject({
      type: 'finalize-end',
      finalize: 'failed',
    })
    // Not recovery's any more (it cannot pass by itself): only the user's.
    expect(await a.recovery.sweep()).toBe(0)
    await expect(a.finalizeRun(owner.id, created.id)).rejects.toThrow(/is gone/)
  })
})
