// A run is `running` by the time its `run-start` reaches a client. The web UI's chat and run lists fetch a
// run again when its run-start arrives, and no later event says it is running: with the status written
// only once the agent's process had started, a spawn slower than that fetch (the agent launcher's, which
// waits on IPC round trips, and on the launcher itself for the first run) left the chat showing
// `preparing` while the agent's reply streamed in. The spawn here waits for the client's fetch, as the
// launcher's did, in both spawn modes.
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentLauncher } from '../adapters/agent-launcher.js'
import { claudeCodeAdapter } from '../adapters/defs/claude-code.js'
import { createSupervisor, type Supervisor } from '../adapters/supervisor.js'
import type { RunStatus } from '../core/events.js'
import { createRedactor } from '../core/redact.js'
import type { User } from '../store/repositories/users-repository.js'
import { openStore, type Store } from '../store/store.js'
import { executeCliRun } from './execute-cli-run.js'
import { createRunService } from './run-service.js'

// Claude Code as far as this needs: the prompt read from stdin, one result line, exit 0.
const FAKE_CLAUDE = `#!/bin/sh
cat > /dev/null
echo '{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"session-1"}'
`

describe.each([
  { mode: 'spawned by the daemon', launcher: false },
  { mode: 'spawned by the agent launcher', launcher: true },
])('run status at run-start ($mode)', ({ launcher }) => {
  let root: string
  let store: Store
  let owner: User
  let executable: string
  const agentLauncher = launcher ? createAgentLauncher() : undefined

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-run-start-'))
    store = await openStore({ dataDir: path.join(root, 'data') })
    owner = await store.users.create({ name: 'owner', role: 'owner' })
    executable = path.join(root, 'fake-claude')
    await writeFile(executable, FAKE_CLAUDE, { mode: 0o755 })
  })

  afterAll(async () => {
    agentLauncher?.close()
    await store?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('is running when a client that saw run-start fetches the run', async () => {
    const cwd = path.join(root, 'workspace')
    await mkdir(cwd)
    execFileSync('git', ['init', '-q'], { cwd })
    let seen: (status: RunStatus | undefined) => void = () => {}
    const statusAtRunStart = new Promise<RunStatus | undefined>((resolve) => (seen = resolve))
    const runs = createRunService({
      store,
      redactor: createRedactor(),
      owner: { node: 'test', pid: process.pid, bootId: 'boot' },
      // The client: fetches the run as soon as its run-start is delivered.
      sink: (envelopes) => {
        const start = envelopes.find((envelope) => envelope.type === 'run-start')
        if (start)
          void store
            .forUser(owner.id)
            .runs.get(start.runId)
            .then((run) => seen(run?.status))
      },
    })
    const supervisor = createSupervisor(agentLauncher ? { launcher: agentLauncher } : {})
    // A spawn that returns only after the client's fetch.
    const slowSpawn: Supervisor = {
      ...supervisor,
      start: async (...args) => {
        await statusAtRunStart
        return supervisor.start(...args)
      },
    }
    const active = await runs.start(owner.id, {
      agent: 'claude-code',
      adapter: 'claude-code',
      prompt: 'hi',
      cwd,
    })
    const end = await executeCliRun(
      active,
      {
        agent: 'claude-code',
        adapter: claudeCodeAdapter,
        executable: { path: executable },
        prompt: 'hi',
        cwd,
        isolateHome: true,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      },
      { supervisor: slowSpawn, runFilesRoot: path.join(root, 'data', 'runs') },
    )
    expect(await statusAtRunStart).toBe('running')
    expect(end.status).toBe('succeeded')
  })
})
