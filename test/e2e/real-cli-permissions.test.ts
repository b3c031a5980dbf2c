// Issue 18 item 8: permissions pass through; no privileged mode by default. The real CLIs (pinned) on the
// mock model, through the whole run path, with a profile's `permissions` mapped by each adapter: every
// mode's flags are accepted by the real binary (the run succeeds), the default mode still writes a file
// through the CLI's own tool but runs no shell command (before: Copilot got --allow-all-tools and OpenClaw
// full exec, so the shell ran), strict writes nothing, permissive runs the shell, and a denied tool is
// not run. Codex is the exception by design: its shell is how it reads, so the default keeps the shell
// inside the workspace-write sandbox rather than refusing it.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSupervisor } from '../../src/adapters/supervisor.js'
import type { ResolvedExecutable } from '../../src/adapters/types.js'
import type { EventEnvelope } from '../../src/core/events.js'
import type { PermissionsConfig } from '../../src/core/permissions.js'
import { createRedactor } from '../../src/core/redact.js'
import { executeCliRun } from '../../src/runs/execute-cli-run.js'
import { createRunService } from '../../src/runs/run-service.js'
import type { Run } from '../../src/store/repositories/runs-repository.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { openStore, type Store } from '../../src/store/store.js'
import {
  DEFAULT_FILE_CONTENT,
  type MockModelServer,
  reply,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import {
  endpointUrl,
  loopbackOnlyEnv,
  privateScratchRoot,
  REAL_CLI_CASES,
  startRefusingProxy,
  TEST_API_KEY,
} from '../helpers/real-cli-cases.js'

/** The tool each CLI runs shell commands with (the mock calls it by name with a command writing FILE). */
const SHELL_TOOL: Record<string, string> = {
  claude: 'Bash',
  codex: 'exec_command',
  gemini: 'run_shell_command',
  opencode: 'bash',
  copilot: 'bash',
  openclaw: 'exec',
}

/** How each CLI names the shell in its permission rules (Copilot's are permission kinds, not tool names). */
const SHELL_PERMISSION: Record<string, string> = { ...SHELL_TOOL, copilot: 'shell' }

interface Outcome {
  run: Run
  events: EventEnvelope[]
}

describe.each(REAL_CLI_CASES)('permissions of the real CLI: $name', (cliCase) => {
  let mock: MockModelServer
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let home: string
  let store: Store
  let owner: User
  let executable: ResolvedExecutable
  const supervisor = createSupervisor()
  const shellTool = SHELL_TOOL[cliCase.name]!

  beforeAll(async () => {
    executable = await cliCase.resolve()
    mock = await startMockModelServer()
    proxy = await startRefusingProxy()
    root = await privateScratchRoot(`permissions-${cliCase.name}`)
    home = path.join(root, 'home')
    await mkdir(path.join(home, 'tmp'), { recursive: true })
    store = await openStore({ dataDir: path.join(root, 'data') })
    owner = await store.users.create({ name: 'owner', role: 'owner' })
  }, 180_000)

  afterAll(async () => {
    await mock?.close()
    await proxy?.close()
    await store?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  async function workspace(): Promise<string> {
    const directory = path.join(root, `workspace-${Math.random().toString(36).slice(2, 8)}`)
    await mkdir(directory)
    execFileSync('git', ['init', '-q'], { cwd: directory })
    await writeFile(path.join(directory, 'README.md'), '# scratch\n')
    return directory
  }

  async function run(cwd: string, prompt: string, permissions?: PermissionsConfig): Promise<Outcome> {
    const runs = createRunService({
      store,
      redactor: createRedactor(),
      owner: { node: 'test', pid: process.pid, bootId: 'boot' },
    })
    const active = await runs.start(owner.id, {
      agent: cliCase.adapter.id,
      adapter: cliCase.adapter.id,
      prompt,
      cwd,
    })
    const end = await executeCliRun(
      active,
      {
        agent: cliCase.adapter.id,
        adapter: cliCase.adapter,
        executable,
        prompt,
        cwd,
        model: cliCase.model,
        endpoint: {
          family: cliCase.family,
          baseUrl: endpointUrl(cliCase.family, mock.url),
          apiKey: TEST_API_KEY,
        },
        permissions,
        env: {
          PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
          LANG: 'C.UTF-8',
          HOME: home,
          TMPDIR: path.join(home, 'tmp'),
          ...loopbackOnlyEnv(proxy.url),
          ...cliCase.env,
        },
        timeoutSeconds: cliCase.runTimeout,
      },
      {
        supervisor,
        signal: AbortSignal.timeout(cliCase.runTimeout * 1000),
        runFilesRoot: path.join(root, 'data', 'runs'),
      },
    )
    const finished = await active.end(end)
    return { run: finished, events: await store.forUser(owner.id).runs.listEvents(finished.id) }
  }

  /**
   * A prompt that makes the model call the shell tool to create `file`. Claude's acceptEdits lets a plain
   * redirection into the workspace through as a file edit, so it gets a program instead (scripted).
   */
  function shellPrompt(file: string): string {
    if (cliCase.name !== 'claude') return `Please run a command. TOOL=${shellTool} FILE=${file}`
    const command = `node -e "require('fs').writeFileSync('${file}', 'x')"`
    mock.enqueue(reply().tool('Bash', { command }).stop('tool_use'))
    return 'Please run a command. NOTOOL'
  }

  const explain = (outcome: Outcome) =>
    JSON.stringify(
      {
        status: outcome.run.status,
        reason: outcome.run.reason,
        events: outcome.events
          .filter((event) => ['tool-call', 'tool-result', 'error', 'text-delta'].includes(event.type))
          .slice(-8),
      },
      null,
      1,
    )
  const timeout = (cliCase.runTimeout + 60) * 1000

  it(
    'writes a file through its own tool with the default permissions',
    async () => {
      const cwd = await workspace()
      const outcome = await run(cwd, 'Please create a file. FILE=default.txt')
      expect(outcome.run.status, explain(outcome)).toBe('succeeded')
      expect(await readFile(path.join(cwd, 'default.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
      expect(proxy.attempts).toEqual([])
    },
    timeout,
  )

  if (cliCase.name === 'codex') {
    it(
      'keeps its shell inside the workspace-write sandbox by default',
      async () => {
        const cwd = await workspace()
        const outcome = await run(cwd, shellPrompt('shell.txt'))
        expect(outcome.run.status, explain(outcome)).toBe('succeeded')
        expect(existsSync(path.join(cwd, 'shell.txt')), explain(outcome)).toBe(true)
        // The sandbox is on: the turn metadata Codex sends says so.
        const metadata = mock.requests.at(-1)?.headers['x-codex-turn-metadata'] ?? ''
        expect(metadata).toContain('workspace-write')
      },
      timeout,
    )
  } else {
    it(
      'runs no shell command with the default permissions',
      async () => {
        const cwd = await workspace()
        const outcome = await run(cwd, shellPrompt('shell.txt'))
        expect(outcome.run.status, explain(outcome)).toBe('succeeded')
        expect(existsSync(path.join(cwd, 'shell.txt')), explain(outcome)).toBe(false)
      },
      timeout,
    )
  }

  it(
    'writes nothing in strict mode, and the CLI accepts the strict flags',
    async () => {
      const cwd = await workspace()
      const outcome = await run(cwd, 'Please create a file. FILE=strict.txt', { mode: 'strict' })
      expect(outcome.run.status, explain(outcome)).toBe('succeeded')
      expect(existsSync(path.join(cwd, 'strict.txt')), explain(outcome)).toBe(false)
    },
    timeout,
  )

  it(
    'runs a shell command in permissive mode',
    async () => {
      const cwd = await workspace()
      const outcome = await run(cwd, shellPrompt('permissive.txt'), {
        mode: 'permissive',
      })
      expect(outcome.run.status, explain(outcome)).toBe('succeeded')
      expect(existsSync(path.join(cwd, 'permissive.txt')), explain(outcome)).toBe(true)
    },
    timeout,
  )

  if (cliCase.adapter.id !== 'codex') {
    it(
      'does not run a denied tool, even in permissive mode',
      async () => {
        const cwd = await workspace()
        const outcome = await run(cwd, shellPrompt('denied.txt'), {
          mode: 'permissive',
          deniedTools: [SHELL_PERMISSION[cliCase.name]!],
        })
        expect(outcome.run.status, explain(outcome)).toBe('succeeded')
        expect(existsSync(path.join(cwd, 'denied.txt')), explain(outcome)).toBe(false)
      },
      timeout,
    )
  }

  if (cliCase.name === 'claude') {
    it(
      'refuses a shell command in the tool result by default, and still reads files in strict mode',
      async () => {
        const cwd = await workspace()
        // Not a file edit (acceptEdits lets plain redirections into the workspace through): a program.
        const command = `node -e "require('fs').writeFileSync('ran.txt', 'x')"`
        mock.enqueue(reply().tool('Bash', { command }, { id: 'toolu_perm_1' }).stop('tool_use'))
        const refused = await run(cwd, 'Please run a command. NOTOOL')
        const result = refused.events.find(
          (event) => event.type === 'tool-result' && event.toolCallId === 'toolu_perm_1',
        )
        expect(result, explain(refused)).toMatchObject({ isError: true })
        expect(existsSync(path.join(cwd, 'ran.txt'))).toBe(false)

        const read = await run(cwd, 'Please read a file. TOOL=Read FILE=README.md', { mode: 'strict' })
        expect(read.run.status, explain(read)).toBe('succeeded')
        const readResult = read.events.find((event) => event.type === 'tool-result')
        expect(readResult, explain(read)).toMatchObject({ isError: false })
        expect(JSON.stringify(readResult)).toContain('scratch')
      },
      timeout * 2,
    )
  }
})
