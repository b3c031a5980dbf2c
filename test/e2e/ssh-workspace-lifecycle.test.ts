// Issue 20 item 5 on an SSH target: the workspace's setup runs on the host, in the host's copy of the
// workspace, before the agent's first turn there — with the copied git-ignored `.env` (ignored files are
// never shipped, so the lifecycle sends them) and HANGAR_PORT. Real Claude Code runs on a loopback OpenSSH
// host (`hangar run --isolate`, model traffic tunnelled back to the proxy, the mock model behind it).
// Removing the workspace runs its teardown there too, then removes the host's copy.
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  privateScratchRoot,
  realCliPath,
  startRefusingProxy,
  TEST_API_KEY,
} from '../helpers/real-cli-cases.js'
import { startSshd, type TestSshd } from '../helpers/sshd.js'

describe('workspace lifecycle on an SSH target', () => {
  let sshd: TestSshd
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let project: string
  let hostDir: string

  beforeAll(async () => {
    sshd = await startSshd()
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    root = await privateScratchRoot('ssh-lifecycle')
    project = path.join(root, 'project')
    hostDir = path.join(root, 'host', 'hangar')
    await mkdir(path.join(root, 'home'), { recursive: true })
    await mkdir(project)
    await writeFile(path.join(project, '.gitignore'), '.env\n.setup-where\n')
    await writeFile(path.join(project, '.env'), 'DB_URL=postgres://local\n')
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'targets:',
        `  box: { ssh: "${sshd.user}@127.0.0.1", dir: "${hostDir}", port: ${sshd.port}, identityFile: "${sshd.identityFile}" }`,
        'agents:',
        '  far: { adapter: claude-code, target: box }',
        'projects:',
        '  project:',
        '    workspace:',
        '      copy: [".env"]',
        '      ports: 2',
        `      setup: 'echo "$PWD|$(cat .env)|$HANGAR_PORT" > .setup-where; echo set up on the host'`,
        `      teardown: 'echo "$PWD" > ../../torn-down-here'`,
      ].join('\n'),
    )
    gitIn(project, 'init', '-q', '-b', 'main')
    gitIn(project, 'add', '-A')
    gitIn(project, 'commit', '-qm', 'initial')
  }, 60_000)

  afterAll(async () => {
    await sshd?.stop()
    await mock?.close()
    await refusing?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('runs setup on the host, in its copy of the workspace, with the .env and HANGAR_PORT; teardown there too', async () => {
    const env = cleanEnv({
      PATH: realCliPath(),
      HOME: path.join(root, 'home'),
      CLAUDE_CONFIG_DIR: path.join(root, 'claude-config'),
      HANGAR_DATA_DIR: path.join(root, 'data'),
      HANGAR_SSH_COMMAND: sshd.sshCommand,
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    const result = await runHangar(['run', '--agent', 'far', '--isolate', '--json', 'NOTOOL hello'], {
      env,
      cwd: project,
      timeoutMs: 150_000,
    })
    expect(result.code, `${result.stderr}\n${result.stdout.slice(-1500)}`).toBe(0)
    const envelopes = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; [field: string]: unknown })
    const types = envelopes.map((envelope) => envelope.type)
    expect(envelopes.find((envelope) => envelope.type === 'workspace-setup-start')).toMatchObject({
      target: 'box',
    })
    expect(types.indexOf('workspace-setup-end')).toBeLessThan(types.indexOf('run-start'))
    expect(envelopes.find((envelope) => envelope.type === 'workspace-setup-delta')?.text).toContain(
      'set up on the host',
    )

    // It ran in the host's copy (under the target's dir), where the .env was sent; not in the local one.
    const hostWorkspaces = path.join(hostDir, 'workspaces')
    const [key] = (await readdir(hostWorkspaces)).filter((name) => !name.endsWith('.unfinalized'))
    const where = (await readFile(path.join(hostWorkspaces, key!, '.setup-where'), 'utf8')).trim().split('|')
    expect(where[0]).toBe(path.join(hostWorkspaces, key!))
    expect(where[1]).toBe('DB_URL=postgres://local')
    expect(Number(where[2])).toBeGreaterThan(1024)
    const start = envelopes.find((envelope) => envelope.type === 'run-start')!
    const local = path.join(root, 'data', 'workspaces')
    const [localName] = await readdir(local)
    expect(existsSync(path.join(local, localName!, '.setup-where'))).toBe(false)
    expect(await readFile(path.join(local, localName!, '.env'), 'utf8')).toBe('DB_URL=postgres://local\n')
    expect(String(start.cwd)).toContain(hostWorkspaces)

    // Removing the workspace runs the teardown where the setup ran: on the host, in its copy.
    const listed = await runHangar(['workspaces', 'list', '--json'], { env, cwd: project })
    const [workspace] = JSON.parse(listed.stdout) as { id: string }[]
    const removed = await runHangar(['workspaces', 'remove', workspace!.id, '--json'], {
      env,
      cwd: project,
      timeoutMs: 60_000,
    })
    expect(removed.code, removed.stderr).toBe(0)
    expect(JSON.parse(removed.stdout).teardown).toEqual([{ target: 'box', exitCode: 0, tail: '' }])
    expect((await readFile(path.join(hostDir, 'torn-down-here'), 'utf8')).trim()).toBe(
      path.join(hostWorkspaces, key!),
    )
    expect(existsSync(path.join(local, localName!))).toBe(false)
    // And the host's copy goes with it (`hangar run` opened the store itself, so did the removal).
    expect(JSON.parse(removed.stdout).hostCopies).toEqual([{ target: 'box', removed: true }])
    expect(existsSync(path.join(hostWorkspaces, key!))).toBe(false)
  }, 200_000)
})
