import { readFileSync } from 'node:fs'
import os from 'node:os'
import { afterAll, describe, expect, it } from 'vitest'
import { createAgentLauncher } from './agent-launcher.js'
import { autogroupOf, ROOT_GROUP } from './agent-priority.js'
import { createSupervisor } from './supervisor.js'
import type { LaunchPlan } from './types.js'

const shell = (script: string, stdin: string | null = null): LaunchPlan => ({
  command: '/bin/sh',
  args: ['-c', script],
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  stdin,
  files: [],
})

const launcher = createAgentLauncher()
afterAll(() => launcher.close())

describe('agent launcher', () => {
  // The launcher must never read an agent's output itself: what it read before passing the pipe on would
  // be lost. Agents that print at once and exit are the ones that would lose it.
  it('loses no output of agents that print and exit at once', async () => {
    const supervisor = createSupervisor({ launcher })
    const outputs = await Promise.all(
      Array.from({ length: 24 }, async (_, index) => {
        const lines: string[] = []
        const handle = await supervisor.start(shell(`printf 'first ${index}\\nlast ${index}'`), os.tmpdir(), {
          onLine: (line) => lines.push(line),
        })
        const exit = await handle.exited
        return { lines, exit }
      }),
    )
    outputs.forEach(({ lines, exit }, index) => {
      expect(lines).toEqual([`first ${index}`, `last ${index}`])
      expect(exit).toEqual({ code: 0, signal: null, cancelled: false })
    })
  })

  it('reports the exit code, and the signal that ended an agent', async () => {
    const supervisor = createSupervisor({ launcher })
    const failed = await supervisor.start(shell('exit 3'), os.tmpdir(), { onLine: () => {} })
    expect(await failed.exited).toEqual({ code: 3, signal: null, cancelled: false })
    const killed = await supervisor.start(shell('kill -KILL $$'), os.tmpdir(), { onLine: () => {} })
    expect(await killed.exited).toEqual({ code: null, signal: 'SIGKILL', cancelled: false })
  })

  it('starts a process of its own group, with the working directory asked for', async () => {
    const lines: string[] = []
    const handle = await createSupervisor({ launcher }).start(shell('ps -o pgid= -p $$; pwd -P'), '/', {
      onLine: (line) => lines.push(line.trim()),
    })
    await handle.exited
    expect(lines).toEqual([String(handle.pid), '/'])
  })

  it('starts again after it was closed', async () => {
    const own = createAgentLauncher()
    const supervisor = createSupervisor({ launcher: own })
    const lines: string[] = []
    await (
      await supervisor.start(shell('echo one'), os.tmpdir(), { onLine: (line) => lines.push(line) })
    ).exited
    supervisor.close()
    await (
      await supervisor.start(shell('echo two'), os.tmpdir(), { onLine: (line) => lines.push(line) })
    ).exited
    own.close()
    expect(lines).toEqual(['one', 'two'])
  })

  it('lowers the agent priority before it reports the agent started', async () => {
    // Read from here as soon as launch() resolves: no supervisor, so no daemon-side lowering to mask it.
    const launched = await launcher.launch({
      command: '/bin/sh',
      args: ['-c', 'exec sleep 30'],
      cwd: os.tmpdir(),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdin: null,
      priority: { niceness: 17, groupNiceness: 16 },
    })
    try {
      const niceness = Number(
        readFileSync(`/proc/${launched.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16],
      )
      expect(niceness).toBe(17)
      const group = autogroupOf(launched.pid)
      // Its own session's group, lowered; the test's own group (the daemon's, in real use) is left alone.
      if (group && group.name !== ROOT_GROUP.name) expect(group.nice).toBe(16)
      expect(autogroupOf('self')?.nice).not.toBe(16)
    } finally {
      process.kill(-launched.pid, 'SIGKILL')
      await launched.closed
    }
  })

  it('fails to start a missing working directory with the spawn error', async () => {
    await expect(
      createSupervisor({ launcher }).start(shell('true'), '/nonexistent/dir', { onLine: () => {} }),
    ).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
