import diagnostics from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createAgentLauncher } from './agent-launcher.js'
import { agentNiceness, autogroupOf } from './agent-priority.js'
import {
  type AgentLineMessage,
  agentLineRead,
  createSupervisor,
  groupAlive,
  STDERR_TAIL_BYTES,
} from './supervisor.js'
import type { LaunchPlan } from './types.js'

const shell = (script: string, stdin: string | null = null): LaunchPlan => ({
  command: '/bin/sh',
  args: ['-c', script],
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  stdin,
  files: [],
})

// The same behaviour whether the daemon spawns an agent itself or its agent launcher does (`hangar up`).
const launcher = createAgentLauncher()
afterAll(() => launcher.close())

describe.each([
  ['spawned here', () => createSupervisor()],
  ['spawned by the agent launcher', () => createSupervisor({ launcher })],
])('supervisor, %s', (_mode, createSupervisor) => {
  it('feeds stdin, splits stdout into lines (including a last line without newline), and reports the exit', async () => {
    const lines: string[] = []
    const handle = await createSupervisor().start(
      shell('cat; printf "partial"', 'one\ntwo\r\nthree ✓\n'),
      os.tmpdir(),
      { onLine: (line) => lines.push(line) },
    )
    const exit = await handle.exited
    expect(lines).toEqual(['one', 'two', 'three ✓', 'partial'])
    expect(exit).toEqual({ code: 0, signal: null, cancelled: false })
  })

  it('tells the hangar:agent-line-read diagnostics channel of each line, the last one too', async () => {
    const published: string[] = []
    const listener = (message: unknown) => published.push((message as AgentLineMessage).line)
    diagnostics.subscribe(agentLineRead.name, listener)
    try {
      const handle = await createSupervisor().start(shell('printf "one\\n\\ntwo"'), os.tmpdir(), {
        onLine: () => {},
      })
      await handle.exited
      // Other tests' agents may run meanwhile: only this one's lines are looked at.
      expect(published.filter((line) => line === 'one' || line === 'two')).toEqual(['one', 'two'])
    } finally {
      diagnostics.unsubscribe(agentLineRead.name, listener)
    }
  })

  it('keeps only a bounded tail of stderr', async () => {
    const handle = await createSupervisor().start(
      shell(`head -c ${STDERR_TAIL_BYTES * 3} /dev/zero | tr '\\0' x >&2; echo END >&2`),
      os.tmpdir(),
      { onLine: () => {} },
    )
    await handle.exited
    expect(handle.stderrTail().length).toBeLessThanOrEqual(STDERR_TAIL_BYTES)
    expect(handle.stderrTail().trim().endsWith('END')).toBe(true)
  })

  it('writes the plan files before spawning', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'hangar-sup-'))
    const file = path.join(directory, 'nested', 'settings.json')
    const lines: string[] = []
    const handle = await createSupervisor().start(
      { ...shell(`cat "${file}"`), files: [{ path: file, content: '{"a":1}\n' }] },
      directory,
      { onLine: (line) => lines.push(line) },
    )
    await handle.exited
    expect(lines).toEqual(['{"a":1}'])
  })

  it('gives the process its working directory as PWD, not the one it inherited', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'hangar-sup-'))
    const lines: string[] = []
    const plan: LaunchPlan = {
      command: process.execPath,
      args: ['-e', 'process.stdout.write(process.env.PWD + "\\n" + process.cwd())'],
      env: { PWD: os.homedir() },
      stdin: null,
      files: [],
    }
    const handle = await createSupervisor().start(plan, directory, { onLine: (line) => lines.push(line) })
    await handle.exited
    expect(lines).toEqual([directory, directory])
  })

  it('cancels the whole process group, escalating to SIGKILL for a child that ignores SIGTERM', async () => {
    const lines: string[] = []
    const handle = await createSupervisor().start(
      // A grandchild that ignores SIGTERM and would outlive its parent.
      shell(
        `sh -c 'trap "" TERM; echo child-ready; while true; do sleep 0.1; done' & echo parent-ready; wait`,
      ),
      os.tmpdir(),
      { onLine: (line) => lines.push(line) },
    )
    while (lines.length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
    await handle.cancel(300)
    const exit = await handle.exited
    expect(exit.cancelled).toBe(true)
    expect(groupAlive(handle.pgid)).toBe(false)
  })

  it('runs the agent at a lower CPU priority than the daemon, in its own scheduling group', async () => {
    // The agent prints its own niceness and its session's autogroup once started (the daemon's stay as they were).
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-priority-'))
    const lines: string[] = []
    const handle = await createSupervisor().start(
      shell(
        `while [ ! -e ${dir}/go ]; do sleep 0.02; done; cut -d" " -f19 /proc/self/stat; cat /proc/self/autogroup 2>/dev/null || echo none`,
      ),
      os.tmpdir(),
      { onLine: (line) => lines.push(line) },
    )
    writeFileSync(path.join(dir, 'go'), '')
    await handle.exited
    expect(Number(lines[0])).toBe(agentNiceness(os.getPriority()))
    const own = autogroupOf('self')
    if (own && lines[1] !== 'none') {
      const [name, , nice] = lines[1]!.split(' ')
      expect(name).not.toBe(own.name)
      expect(Number(nice)).toBeGreaterThan(own.nice)
    }
    // The daemon's own priority and group are as they were.
    expect(autogroupOf('self')).toEqual(own)
  })

  it('makes running agents nicer as more of them run, and less nice again as they end', async () => {
    // This machine's kernel schedules by autogroup: without it there would be nothing to share.
    const own = autogroupOf('self')
    expect(own).toBeDefined()
    const supervisor = createSupervisor()
    const agent: LaunchPlan = { ...shell(''), command: 'sleep', args: ['60'] }
    const handles = []
    for (let index = 0; index < 12; index++)
      handles.push(await supervisor.start(agent, os.tmpdir(), { onLine: () => {} }))
    const groupNiceness = (pid: number) => autogroupOf(pid)?.nice
    // Twelve groups at the daemon's niceness + 10 would weigh 12 × 110 against its 1024: each is at + 12.
    for (const handle of handles) expect(groupNiceness(handle.pid)).toBe(own!.nice + 12)
    // Eight end: the four left share the weight at + 10 again.
    await Promise.all(handles.slice(0, 8).map((handle) => handle.cancel()))
    for (const handle of handles.slice(8)) expect(groupNiceness(handle.pid)).toBe(own!.nice + 10)
    await Promise.all(handles.slice(8).map((handle) => handle.cancel()))
    expect(autogroupOf('self')).toEqual(own)
  })

  it('fails to start a missing executable with a clear error', async () => {
    await expect(
      createSupervisor().start({ ...shell(''), command: '/nonexistent/agent' }, os.tmpdir(), {
        onLine: () => {},
      }),
    ).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
