// Issue 18 item 10: skills Hangar placed in a workspace, and their `.git/info/exclude` block, are removed
// even when the daemon dies mid-run (SIGKILL: no `finally` runs). The restarted daemon's recovery finds
// what the interrupted run placed and removes it. Real Claude Code on the mock model, which hangs the turn.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { cleanEnv, type RunningDaemon, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  privateScratchRoot,
  realCliPath,
  startRefusingProxy,
  TEST_API_KEY,
  waitFor,
} from '../helpers/real-cli-cases.js'

describe('skills after a daemon crash', () => {
  let mock: MockModelServer
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let project: string
  let dataDir: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon | undefined
  let token = ''

  const { api, waitForStatus } = createApiClient(() => ({ url: daemon!.url, token }))
  const readToken = async () =>
    (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token

  beforeAll(async () => {
    mock = await startMockModelServer()
    proxy = await startRefusingProxy()
    root = await privateScratchRoot('skills-crash')
    dataDir = path.join(root, 'data')
    project = path.join(root, 'project')
    await mkdir(path.join(project, 'skills', 'house-review'), { recursive: true })
    await mkdir(path.join(root, 'home'), { recursive: true })
    execFileSync('git', ['init', '-q'], { cwd: project })
    await writeFile(
      path.join(project, 'skills', 'house-review', 'SKILL.md'),
      '---\nname: house-review\ndescription: Checks the zebra-striped naming rule\n---\nAlways check zebra stripes.\n',
    )
    await writeFile(
      path.join(project, 'hangar.yaml'),
      'agents:\n  reviewer:\n    adapter: claude-code\n    skills: [./skills/house-review]\n',
    )
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: path.join(root, 'home'),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(proxy.url),
    })
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    await proxy?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('removes the placed skill and its exclude block when the restarted daemon recovers the run', async () => {
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
    token = await readToken()
    const placed = path.join(project, '.claude', 'skills', 'house-review', 'SKILL.md')
    const exclude = path.join(project, '.git', 'info', 'exclude')
    const run = await api<{ id: string }>('POST', '/api/runs', {
      agent: 'reviewer',
      prompt: 'HANG',
      cwd: project,
    })
    expect(run.status).toBe(201)
    await waitForStatus(run.json.id, ['running'], 90_000)
    // The agent is waiting on the model, its skill in place and hidden from git.
    expect(
      await waitFor(() => mock.requests.some((request) => request.rawBody.includes('zebra-striped')), 90_000),
    ).toBe(true)
    expect(existsSync(placed)).toBe(true)
    expect(await readFile(exclude, 'utf8')).toContain(`# hangar:${run.json.id}`)

    daemon.child.kill('SIGKILL')
    await daemon.stop()
    // Nothing ran the run's cleanup.
    expect(existsSync(placed)).toBe(true)

    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
    token = await readToken()
    await waitForOutput(daemon.stdout, 'Marked 1 run(s) left unfinished by an earlier daemon as interrupted.')
    expect((await api<{ status: string }>('GET', `/api/runs/${run.json.id}`)).json.status).toBe('interrupted')
    expect(existsSync(path.join(project, '.claude'))).toBe(false)
    expect(await readFile(exclude, 'utf8')).not.toContain('hangar:')
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: project }).toString()).not.toContain(
      '.claude',
    )
  }, 300_000)
})
