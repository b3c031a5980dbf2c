import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import {
  authProbeInput,
  endpoint,
  expectPlanInvariants,
  launchInput,
} from '../../../test/helpers/launch-input.js'
import { createSupervisor, groupAlive } from '../supervisor.js'
import { cursorAgentAdapter } from './cursor-agent.js'

const FAKE_CLI = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/fixtures/bin/cursor-agent',
)

async function runFake(
  cwd: string,
  home: string,
  prompt: string,
  options: { resumeSessionId?: string; env?: Record<string, string> } = {},
) {
  const plan = cursorAgentAdapter.buildLaunch(
    launchInput({
      prompt,
      cwd,
      home,
      runDir: path.join(home, 'run'),
      env: { PATH: process.env.PATH, ...options.env },
      executable: { path: FAKE_CLI },
      resumeSessionId: options.resumeSessionId,
    }),
  )
  const lines: string[] = []
  const child = await createSupervisor().start(plan, cwd, { onLine: (line) => lines.push(line) })
  return { child, lines }
}

describe('cursorAgentAdapter', () => {
  it('runs print mode with partial stream-json, a trusted workspace and no --force by default, the prompt last', () => {
    const input = launchInput({
      model: 'sonnet-4',
      resumeSessionId: 'chat-1',
      endpoint: endpoint('anthropic'),
    })
    const plan = cursorAgentAdapter.buildLaunch(input)
    expect(plan.args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--stream-partial-output',
      '--trust',
      '--workspace',
      input.cwd,
      '--model',
      'sonnet-4',
      '--resume',
      'chat-1',
      input.prompt,
    ])
    expect(plan.stdin).toBeNull()
    // No base-URL support: an endpoint changes nothing.
    expect(Object.keys(plan.env).sort()).toEqual(['HOME', 'LANG', 'PATH'])
    expect(cursorAgentAdapter.verified).toBe(false)
    expect(cursorAgentAdapter.endpointFamilies).toEqual([])
    expectPlanInvariants(plan, input)
  })

  it('probes auth as ok with CURSOR_API_KEY and unknown otherwise', async () => {
    expect((await cursorAgentAdapter.probeAuth(authProbeInput({ env: { CURSOR_API_KEY: 'k' } }))).state).toBe(
      'ok',
    )
    expect((await cursorAgentAdapter.probeAuth(authProbeInput({}))).state).toBe('unknown')
  })

  it('drives the fake CLI: writes the file, resumes the chat, fails on 401 and dies on cancel', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-cursor-'))
    try {
      const first = await runFake(root, root, 'Please create a file. FILE=hello.txt')
      expect((await first.child.exited).code).toBe(0)
      expect(await readFile(path.join(root, 'hello.txt'), 'utf8')).toBe('hello from mock\n')
      const result = JSON.parse(first.lines.at(-1) ?? '{}') as { type?: string; session_id?: string }
      expect(result.type).toBe('result')

      const second = await runFake(root, root, 'FILE=second.txt', { resumeSessionId: result.session_id })
      expect((await second.child.exited).code).toBe(0)
      expect(second.lines[0]).toContain(result.session_id)

      const failing = await runFake(root, root, 'hello', { env: { FAKE_CURSOR_FAIL: '401' } })
      expect((await failing.child.exited).code).toBe(1)
      expect(failing.child.stderrTail()).toContain('401')

      const hanging = await runFake(root, root, 'FILE=x.txt', { env: { FAKE_CURSOR_HANG: '1' } })
      for (let waited = 0; waited < 100 && !existsSync(path.join(root, 'x.txt')); waited += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      await hanging.child.cancel(2000)
      expect((await hanging.child.exited).cancelled).toBe(true)
      expect(groupAlive(hanging.child.pgid)).toBe(false)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  }, 30_000)

  it('has a fake CLI that answers --version', async () => {
    const { stdout } = await promisify(execFile)(FAKE_CLI, ['--version'])
    expect(cursorAgentAdapter.parseVersion(stdout)).toBe('2026.09.01-fake0001')
  })
})
