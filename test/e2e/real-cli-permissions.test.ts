// Issue 18 item 8: permissions pass through; no privileged mode by default. The real CLIs (pinned) on the
// mock model, through the whole run path, with a profile's `permissions` mapped by each adapter: every
// mode's flags are accepted by the real binary (the run succeeds), the default mode still writes a file
// through the CLI's own tool but runs no shell command (before: Copilot got --allow-all-tools and OpenClaw
// full exec, so the shell ran), strict writes nothing, permissive runs the shell, and a denied tool is
// not run. Codex is the exception by design: its shell is how it reads, so the default keeps the shell
// inside the workspace-write sandbox rather than refusing it.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { PermissionsConfig } from '../../src/core/permissions.js'
import { reply } from '../fixtures/mock-model-server.js'
import { REAL_CLI_CASES } from '../helpers/real-cli-cases.js'
import { type RealCliOutcome, useRealCli } from '../helpers/real-cli-harness.js'

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

describe.each(REAL_CLI_CASES)('permissions of the real CLI: $name', (cliCase) => {
  const cli = useRealCli(cliCase, `permissions-${cliCase.name}`)
  const shellTool = SHELL_TOOL[cliCase.name]!
  const run = (cwd: string, prompt: string, permissions?: PermissionsConfig) =>
    cli.run(cwd, prompt, { permissions })

  /**
   * A prompt that makes the model call the shell tool to create `file`. Claude's acceptEdits lets a plain
   * redirection into the workspace through as a file edit, so it gets a program instead (scripted).
   */
  function shellPrompt(file: string): string {
    if (cliCase.name !== 'claude') return `Please run a command. TOOL=${shellTool} FILE=${file}`
    const command = `node -e "require('fs').writeFileSync('${file}', 'x')"`
    cli.mock.enqueue(reply().tool('Bash', { command }).stop('tool_use'))
    return 'Please run a command. NOTOOL'
  }

  const explain = (outcome: RealCliOutcome) =>
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

  // Writing a file through the CLI's own tool with the default permissions is real-clis.test.ts's first
  // test (its runs pass no permissions): not run a second time here.
  if (cliCase.name === 'codex') {
    it(
      'keeps its shell inside the workspace-write sandbox by default',
      async () => {
        const cwd = await cli.workspace()
        const outcome = await run(cwd, shellPrompt('shell.txt'))
        expect(outcome.run.status, explain(outcome)).toBe('succeeded')
        expect(existsSync(path.join(cwd, 'shell.txt')), explain(outcome)).toBe(true)
        // The sandbox is on: the turn metadata Codex sends says so.
        const metadata = cli.mock.requests.at(-1)?.headers['x-codex-turn-metadata'] ?? ''
        expect(metadata).toContain('workspace-write')
      },
      timeout,
    )
  } else {
    it(
      'runs no shell command with the default permissions',
      async () => {
        const cwd = await cli.workspace()
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
      const cwd = await cli.workspace()
      const outcome = await run(cwd, 'Please create a file. FILE=strict.txt', { mode: 'strict' })
      expect(outcome.run.status, explain(outcome)).toBe('succeeded')
      expect(existsSync(path.join(cwd, 'strict.txt')), explain(outcome)).toBe(false)
      expect(cli.proxyAttempts).toEqual([])
    },
    timeout,
  )

  it(
    'runs a shell command in permissive mode',
    async () => {
      const cwd = await cli.workspace()
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
        const cwd = await cli.workspace()
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
        const cwd = await cli.workspace()
        // Not a file edit (acceptEdits lets plain redirections into the workspace through): a program.
        const command = `node -e "require('fs').writeFileSync('ran.txt', 'x')"`
        cli.mock.enqueue(reply().tool('Bash', { command }, { id: 'toolu_perm_1' }).stop('tool_use'))
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
