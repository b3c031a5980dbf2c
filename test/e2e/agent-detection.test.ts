// Issue 18 item 9: detection that helps, and versions we know. A CLI installed where the daemon's PATH does
// not look (nvm, a service manager) was reported "not installed" although its config dir was there, with no
// way to point Hangar at it; a CLI of a version nobody tested ran without a word; and a stream Hangar could
// not parse only left `raw` events nobody looks at. Runs the built binary with the fake Cursor Agent, which
// is reachable only through `adapters.cursor-agent.path`.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const FAKE_CURSOR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin/cursor-agent')

interface DetectedJson {
  id: string
  installed: boolean
  path: string | null
  version: string | null
  problem: string | null
  testedVersions: string | null
  versionWarning: string | null
}

interface EventJson {
  type: string
  code?: string
  message?: string
  retryable?: boolean
}

describe('agent detection (issue 18 item 9)', () => {
  let root: string
  let project: string
  let home: string
  const daemons: RunningDaemon[] = []

  beforeAll(async () => {
    root = await makeTempDir('hangar-detect-e2e-')
    project = path.join(root, 'project')
    home = path.join(root, 'home')
    await mkdir(project)
    // Claude Code was set up once (its config dir exists) but its binary is nowhere on the daemon's PATH.
    await mkdir(path.join(home, '.claude'), { recursive: true })
    execFileSync('git', ['init', '-q'], { cwd: project })
    await writeFile(
      path.join(project, 'hangar.yaml'),
      ['adapters:', `  cursor-agent: { path: ${JSON.stringify(FAKE_CURSOR)} }`].join('\n'),
    )
  })
  afterAll(async () => {
    for (const daemon of daemons) await daemon.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  // The fake's wrapper needs `node`; the fake itself is in no directory of this PATH.
  const environment = (extra: Record<string, string> = {}) =>
    cleanEnv({ PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'), HOME: home, ...extra })

  it('finds a CLI through adapters.<id>.path and says why one with a config dir is not found', async () => {
    const dataDir = path.join(root, 'data-agents')
    const result = await runHangar(['agents', '--refresh', '--data-dir', dataDir], {
      env: environment(),
      cwd: project,
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      /^✗ claude-code \(not installed: config dir ~\/\.claude found but `claude` is not on the daemon's PATH; .*adapters\.claude-code\.path: \/full\/path\/to\/claude in hangar\.yaml\)$/m,
    )
    expect(result.stdout).toMatch(/^✓ cursor-agent 2026\.09\.01-fake0001 \(auth: unknown/m)
    const json = JSON.parse(
      (await runHangar(['agents', '--json', '--data-dir', dataDir], { env: environment(), cwd: project }))
        .stdout,
    ) as DetectedJson[]
    expect(json.find((adapter) => adapter.id === 'cursor-agent')).toMatchObject({
      installed: true,
      path: FAKE_CURSOR,
      problem: null,
      versionWarning: null,
    })
    expect(json.find((adapter) => adapter.id === 'claude-code')).toMatchObject({
      installed: false,
      problem: expect.stringContaining("config dir ~/.claude found but `claude` is not on the daemon's PATH"),
    })
  })

  it('reports a missing adapters.<id>.path file as a detection status, not a crash', async () => {
    const other = path.join(root, 'project-missing')
    await mkdir(other)
    await writeFile(
      path.join(other, 'hangar.yaml'),
      `adapters:\n  cursor-agent: { path: ${JSON.stringify(path.join(root, 'nowhere', 'cursor-agent'))} }\n`,
    )
    const result = await runHangar(['agents', '--json', '--refresh', '--data-dir', path.join(root, 'd2')], {
      env: environment(),
      cwd: other,
    })
    expect(result.code, result.stderr).toBe(0)
    const cursor = (JSON.parse(result.stdout) as DetectedJson[]).find(
      (adapter) => adapter.id === 'cursor-agent',
    )
    expect(cursor).toMatchObject({ installed: false })
    expect(cursor?.problem).toContain(
      `adapters.cursor-agent.path: ${path.join(root, 'nowhere', 'cursor-agent')}`,
    )
    expect(cursor?.problem).toContain('does not exist')
  })

  it('warns about a version outside the tested range in hangar agents, --json, hangar up and GET /api/agents', async () => {
    const env = environment({ FAKE_CURSOR_VERSION: '2027.1.0' })
    const dataDir = path.join(root, 'data-version')
    const listed = await runHangar(['agents', '--refresh', '--data-dir', dataDir], { env, cwd: project })
    expect(listed.stdout).toMatch(/^✓ cursor-agent 2027\.1\.0 .*warning: untested version; tested with /m)
    const json = JSON.parse(
      (await runHangar(['agents', '--json', '--data-dir', dataDir], { env, cwd: project })).stdout,
    ) as DetectedJson[]
    const cursor = json.find((adapter) => adapter.id === 'cursor-agent')!
    expect(cursor.testedVersions).toEqual(expect.any(String))
    expect(cursor.versionWarning).toBe(
      `Cursor Agent 2027.1.0 is outside the versions Hangar was tested with (${cursor.testedVersions})`,
    )

    const daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
    daemons.push(daemon)
    // `hangar up` prints its detection lines after the sign-in link.
    await waitForOutput(daemon.stdout, '✓ cursor-agent', 60_000)
    expect(daemon.stdout()).toMatch(/^✓ cursor-agent 2027\.1\.0 .*warning: untested version/m)
    const { token } = JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as {
      token: string
    }
    const response = await fetch(`${daemon.url}/api/agents`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const agents = (await response.json()) as { adapters: DetectedJson[] }
    expect(agents.adapters.find((adapter) => adapter.id === 'cursor-agent')).toMatchObject({
      version: '2027.1.0',
      versionWarning: cursor.versionWarning,
    })
  })

  it('raises one output_unrecognized warning per run for unparsed lines, besides the raw events', async () => {
    const dataDir = path.join(root, 'data-run')
    const daemon = await startDaemon(['--data-dir', dataDir], {
      env: environment(),
      cwd: project,
      timeoutMs: 60_000,
    })
    daemons.push(daemon)
    const { token } = JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as {
      token: string
    }
    const call = async <T>(method: string, route: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${daemon.url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
      return (await response.json()) as T
    }
    const run = await call<{ id: string }>('POST', '/api/runs', {
      agent: 'cursor-agent',
      prompt: 'UNKNOWN=3 FILE=out.txt',
    })
    let status = ''
    for (const deadline = Date.now() + 90_000; Date.now() < deadline;) {
      status = (await call<{ status: string }>('GET', `/api/runs/${run.id}`)).status
      if (['succeeded', 'failed', 'cancelled', 'interrupted'].includes(status)) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(status).toBe('succeeded')
    const stream = await fetch(`${daemon.url}/api/runs/${run.id}/events`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const text = await stream.text()
    const events = [...text.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]!) as EventJson)
    expect(events.filter((event) => event.type === 'raw')).toHaveLength(3)
    const warnings = events.filter((event) => event.type === 'error')
    expect(warnings).toEqual([
      {
        ...warnings[0],
        type: 'error',
        code: 'output_unrecognized',
        retryable: false,
        message: expect.stringMatching(/^output format not recognised; tested with Cursor Agent \S+/),
      },
    ])
  })
})
