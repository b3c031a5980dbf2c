// `hangar triggers add|list|show|run|remove` in this process (runCli) on SQLite with no daemon: a schedule
// trigger in a project, "run now" leaving a queued run for a daemon, the fires listed with their run, a
// webhook trigger's secret printed once, and errors in the one `hangar: error:` form.
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/program.js'
import { cleanEnv } from '../helpers/hangar-cli.js'
import { gitRepo } from '../helpers/in-process-daemon.js'
import { makeTempDir } from '../helpers/store-engines.js'

describe('hangar triggers', { timeout: 120_000 }, () => {
  let root: string
  let work: string
  let env: NodeJS.ProcessEnv
  let globals: string[]

  beforeAll(async () => {
    root = await makeTempDir('hangar-triggers-cli-')
    work = path.join(root, 'work')
    await mkdir(path.join(work, 'repo'), { recursive: true })
    gitRepo(path.join(work, 'repo'))
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      ANTHROPIC_API_KEY: 'sk-ant-test-cli-0123456789',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    })
    globals = ['--data-dir', path.join(root, 'data')]
  })
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true })
  })

  async function hangar(args: string[]) {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const out = { stdout: '', stderr: '' }
    stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()))
    stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()))
    const code = await runCli([...globals, ...args], { stdout, stderr, env, cwd: work })
    return { code, ...out }
  }

  it('adds, lists, fires, shows and removes triggers', async () => {
    expect((await hangar(['projects', 'add', 'repo'])).code).toBe(0)
    const added = await hangar([
      'triggers',
      'add',
      'nightly',
      '--cron',
      '0 3 * * *',
      '--timezone',
      'Europe/Paris',
      '--project',
      'repo',
      '--agent',
      'builtin',
      '--prompt',
      'tidy the changelog',
    ])
    expect(added.stderr).toBe('')
    expect(added.stdout).toMatch(/^Added trigger nightly \(trg_\w+\)\n$/)

    const hook = await hangar([
      'triggers',
      'add',
      'issues',
      '--webhook',
      '--prompt',
      '{{issue.title}}',
      '--json',
    ])
    expect(hook.code, hook.stderr).toBe(0)
    const created = JSON.parse(hook.stdout) as { id: string; url: string; secret: string }
    expect(created.secret).toMatch(/^whsec_/)
    expect(created.url).toBe(`/api/hooks/${created.id}`)

    const table = await hangar(['triggers', 'list'])
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+KIND\s+WHEN\s+AGENT\s+PROJECT\s+ID$/)
    expect(table.stdout).toMatch(/nightly\s+schedule\s+0 3 \* \* \* \(Europe\/Paris\)\s+builtin/)
    expect(table.stdout).not.toContain(created.secret)

    const fired = await hangar(['triggers', 'run', 'nightly', '--json'])
    expect(fired.code, fired.stderr).toBe(0)
    const outcome = JSON.parse(fired.stdout) as { fired: boolean; runId: string }
    expect(outcome.fired).toBe(true)
    const shown = await hangar(['triggers', 'show', 'nightly'])
    expect(shown.stdout).toMatch(new RegExp(`manual\\s+started\\s+${outcome.runId}\\s+queued`))

    const invalid = await hangar(['triggers', 'add', 'bad', '--cron', '61 * * * *', '--prompt', 'x'])
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toMatch(
      /^hangar: error: invalid cron expression "61 \* \* \* \*": minute 61 is out of range 0-59/,
    )
    const neither = await hangar(['triggers', 'add', 'bad', '--prompt', 'x'])
    expect(neither.code).toBe(2)
    expect(neither.stderr).toMatch(/^hangar: error: give either --cron EXPRESSION or --webhook/)

    // A report to one of the owner's notification channels, named by its name.
    const channel = await hangar([
      'notify',
      'add',
      'webhook',
      'https://hooks.example.com/x',
      '--name',
      'ops',
      '--json',
    ])
    expect(channel.code, channel.stderr).toBe(0)
    const channelId = (JSON.parse(channel.stdout) as { id: string }).id
    const reporting = await hangar([
      'triggers',
      'add',
      'reporting',
      '--cron',
      '0 4 * * *',
      '--prompt',
      'x',
      '--report-channel',
      'ops',
      '--json',
    ])
    expect(reporting.code, reporting.stderr).toBe(0)
    expect(JSON.parse(reporting.stdout)).toMatchObject({ report: { type: 'channel', channelId } })
    const nowhere = await hangar([
      'triggers',
      'add',
      'nowhere',
      '--cron',
      '0 4 * * *',
      '--prompt',
      'x',
      '--report-channel',
      'nope',
    ])
    expect(nowhere.code).toBe(1)
    expect(nowhere.stderr).toMatch(/^hangar: error: no notification channel nope; see hangar notify list/)

    expect((await hangar(['triggers', 'remove', 'nightly'])).stdout).toBe('Removed trigger nightly\n')
    const gone = await hangar(['triggers', 'show', 'nightly'])
    expect(gone.code).toBe(1)
    expect(gone.stderr).toMatch(/^hangar: error: no trigger nightly/)
  })
})
