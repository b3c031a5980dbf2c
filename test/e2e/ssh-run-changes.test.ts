// Issue 18 item 10 on an SSH target: an edit the agent made through its shell tool on the host is not in
// its stream, yet it comes back with the sync-back and is reported as a synthesised file-change — while a
// file that was already dirty in the local workspace before the run (shipped there and back) is not.
// Real Claude Code on a loopback OpenSSH host, through `hangar run`, on the mock model.
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, realCliPath, startRefusingProxy, TEST_API_KEY } from '../helpers/real-cli-cases.js'
import { startSshd, type TestSshd } from '../helpers/sshd.js'

describe('run changes on an SSH target', () => {
  let sshd: TestSshd
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject

  beforeAll(async () => {
    sshd = await startSshd()
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('ssh-run-changes', 'unused')
    const hostDir = path.join(shop.root, 'host', 'hangar')
    await writeFile(
      path.join(shop.project, 'hangar.yaml'),
      [
        'targets:',
        `  box: { ssh: "${sshd.user}@127.0.0.1", dir: "${hostDir}", port: ${sshd.port}, identityFile: "${sshd.identityFile}" }`,
        'agents:',
        '  far: { adapter: claude-code, target: box }',
      ].join('\n'),
    )
    await writeFile(path.join(shop.project, 'tracked.txt'), 'committed\n')
    gitIn(shop.project, 'add', '-A')
    gitIn(shop.project, 'commit', '-qm', 'initial')
  }, 60_000)

  afterAll(async () => {
    await sshd?.stop()
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  it('reports the host-side shell edit after the sync-back, and not the file that was dirty before', async () => {
    await writeFile(path.join(shop.project, 'tracked.txt'), 'edited locally before the run\n')
    const env = cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      CLAUDE_CONFIG_DIR: path.join(shop.root, 'claude-config'),
      HANGAR_DATA_DIR: path.join(shop.root, 'data'),
      HANGAR_SSH_COMMAND: sshd.sshCommand,
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    const result = await runHangar(
      ['run', '--agent', 'far', '--json', 'Use the shell. TOOL=Bash FILE=far-shell.txt CONTENT=remote'],
      { env, cwd: shop.project, timeoutMs: 150_000 },
    )
    expect(result.code, `${result.stderr}\n${result.stdout.slice(-1500)}`).toBe(0)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; [field: string]: unknown })
    expect(events.find((event) => event.type === 'tool-call')).toMatchObject({ name: 'Bash' })
    expect(await readFile(path.join(shop.project, 'far-shell.txt'), 'utf8')).toBe('remote\n')
    expect(await readFile(path.join(shop.project, 'tracked.txt'), 'utf8')).toBe(
      'edited locally before the run\n',
    )
    expect(events.filter((event) => event.type === 'file-change')).toEqual([
      expect.objectContaining({
        path: 'far-shell.txt',
        kind: 'create',
        diff: expect.stringContaining('+remote'),
      }),
    ])
    await rm(path.join(shop.project, 'far-shell.txt'))
  }, 240_000)
})
