import { existsSync } from 'node:fs'
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { commandEnvironment, createRunCommandTool, runCommandTool } from './run-command-tool.js'
import type { Proposal, ToolContext } from './types.js'

/** Gone, or a zombie waiting to be reaped (it no longer runs). */
async function isDead(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  const status = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  return status === '' || /\) Z /.test(status)
}

async function waitUntilDead(pid: number, milliseconds: number): Promise<boolean> {
  const deadline = Date.now() + milliseconds
  while (Date.now() < deadline) {
    if (await isDead(pid)) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return isDead(pid)
}

describe('run-command-tool', () => {
  let workspace: string
  let context: ToolContext

  beforeEach(async () => {
    workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-command-')))
    context = { workspace }
  })

  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true })
  })

  async function run(command: string, timeoutSeconds?: number, signal?: AbortSignal) {
    const input = { command, ...(timeoutSeconds !== undefined && { timeout_seconds: timeoutSeconds }) }
    const proposal = (await runCommandTool.propose(input, context)) as Proposal
    return runCommandTool.apply(input, { ...context, ...(signal && { signal }) }, proposal)
  }

  it('proposes a destructive_update whose summary shows the whole command, without running it', async () => {
    const proposal = await runCommandTool.propose({ command: 'touch ran.txt\necho done' }, context)
    expect(proposal).toEqual({
      summary: 'Run command (timeout 120 s): touch ran.txt\necho done',
      classification: 'destructive_update',
      precondition: null,
    })
    await expect(readFile(path.join(workspace, 'ran.txt'))).rejects.toThrow(/ENOENT/)
  })

  it('runs in the workspace and returns stdout and stderr with the exit code', async () => {
    const output = await run('pwd; echo to-stderr >&2; exit 3')
    expect(output).toEqual({ content: `${workspace}\nto-stderr\n[exit code 3]`, isError: true })
    expect(await run('true')).toEqual({ content: '(no output)\n[exit code 0]', isError: false })
  })

  it('caps long output at about 30 KB, keeping the start and the end', async () => {
    const output = await run(
      `node -e "process.stdout.write('S'.repeat(20000) + 'M'.repeat(60000) + 'E'.repeat(20000))"`,
    )
    expect(output.content.length).toBeLessThan(32 * 1024)
    expect(output.content).toMatch(
      /^S{10240}\n… \[69280 bytes of output omitted; redirect to a file and grep it/,
    )
    expect(output.content).toMatch(/E{20000}\n\[exit code 0\]$/)
  })

  it('kills the whole process group on timeout', async () => {
    const pidFile = path.join(workspace, 'background.pid')
    const output = await run(`sleep 30 & echo $! > ${pidFile}; sleep 30`, 1)
    expect(output).toMatchObject({ isError: true })
    expect(output.content).toContain('[timed out after 1 s; the command and its child processes were killed]')
    const backgroundPid = Number(await readFile(pidFile, 'utf8'))
    expect(await waitUntilDead(backgroundPid, 3000)).toBe(true)
  })

  it('kills the process group when the signal aborts, and does not start when already aborted', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 200)
    const output = await run('echo started; sleep 30', 60, controller.signal)
    expect(output).toEqual({
      content: 'started\n[aborted; the command and its child processes were killed]',
      isError: true,
    })
    const aborted = AbortSignal.abort()
    expect(await run(`touch ${path.join(workspace, 'never')}`, 60, aborted)).toEqual({
      content: '[aborted before the command started]',
      isError: true,
    })
    await expect(readFile(path.join(workspace, 'never'))).rejects.toThrow(/ENOENT/)
  })

  // Waiting for the background job would take 30 s: the test's own timeout catches that, no clock needed.
  it('does not wait for background jobs once the shell exits', { timeout: 10_000 }, async () => {
    const output = await run('sleep 30 & echo quick')
    expect(output).toEqual({ content: 'quick\n[exit code 0]', isError: false })
  })

  it('keeps the daemon secrets out of the command environment', async () => {
    const environment = commandEnvironment({
      PATH: '/usr/bin:/bin',
      HOME: '/home/x',
      ANTHROPIC_API_KEY: 'sk-secret',
    })
    expect(environment).toMatchObject({ PATH: '/usr/bin:/bin', HOME: '/home/x', GIT_TERMINAL_PROMPT: '0' })
    expect(environment).not.toHaveProperty('ANTHROPIC_API_KEY')
    const tool = createRunCommandTool({ environment: { PATH: process.env.PATH, CUSTOM_VALUE: 'given' } })
    const input = { command: 'echo "$CUSTOM_VALUE"' }
    const output = await tool.apply(input, context, (await tool.propose(input, context)) as Proposal)
    expect(output.content).toBe('given\n[exit code 0]')
  })

  it("gives the command its workspace's variables (HANGAR_PORT) on top of its environment", async () => {
    const tool = createRunCommandTool({ environment: { PATH: process.env.PATH } })
    const input = { command: 'echo "$HANGAR_PORT/$HANGAR_PORT_COUNT"' }
    const withPorts = { ...context, variables: { HANGAR_PORT: '41000', HANGAR_PORT_COUNT: '2' } }
    const output = await tool.apply(input, withPorts, (await tool.propose(input, withPorts)) as Proposal)
    expect(output.content).toBe('41000/2\n[exit code 0]')
  })

  // Issue 17 item 8: a crash during an approved command must leave a process group that a restarted
  // daemon can find and kill — so it is handed out (and recorded) before anything of the command runs.
  it('hands out its process group before the command starts, and runs nothing if recording fails', async () => {
    const marker = path.join(workspace, 'ran')
    const input = { command: `echo $$ > ${marker}` }
    const proposal = (await runCommandTool.propose(input, context)) as Proposal
    let seen: { pgid: number; startedBefore: boolean } | undefined
    const output = await runCommandTool.apply(
      input,
      {
        ...context,
        beforeCommandStarts: async (pgid) => {
          // The command cannot have run yet: it waits for this to return.
          await new Promise((resolve) => setTimeout(resolve, 100))
          seen = { pgid, startedBefore: existsSync(marker) }
        },
      },
      proposal,
    )
    expect(output).toEqual({ content: '(no output)\n[exit code 0]', isError: false })
    expect(seen).toEqual({ pgid: Number(await readFile(marker, 'utf8')), startedBefore: false })

    const refused = await runCommandTool.apply(
      { command: `touch ${path.join(workspace, 'never')}` },
      {
        ...context,
        beforeCommandStarts: () => Promise.reject(new Error('the store is gone')),
      },
      proposal,
    )
    expect(refused).toEqual({
      content: 'The command could not be started: its process could not be recorded (the store is gone)',
      isError: true,
    })
    expect(existsSync(path.join(workspace, 'never'))).toBe(false)
  })

  it('refuses an empty command with a model-readable message', async () => {
    expect(await runCommandTool.propose({ command: '   ' }, context)).toEqual({
      content: 'The command is empty; give the shell command to run.',
      isError: true,
    })
  })
})
