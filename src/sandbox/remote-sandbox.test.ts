import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HOST_PROBE, hostUnavailable, parseHostProbe } from './host-probe.js'
import { silentLogger } from '../core/logger.js'
import type { SshConnection } from '../workspaces/ssh/ssh-connection.js'
import { hostLayout, openRemoteSandbox, wrapOnHost } from './remote-sandbox.js'

const run = promisify(execFile)

const PROBE = {
  home: '/home/me',
  bwrap: '/usr/bin/bwrap',
  version: 'bubblewrap 0.8.0',
  node: '/usr/bin/node',
  command: '/home/me/.npm/bin/claude',
  reals: ['/home/me/.npm/lib/node_modules/@anthropic-ai/claude-code/cli.js', '/usr/bin/node'],
  gitDir: '/home/me/hangar/cache.git/worktrees/k1',
  commonDir: '/home/me/hangar/cache.git',
  net: '/tmp/hangar-net-abc',
  copied: ['.claude.json'],
}

describe('parseHostProbe', () => {
  it('reads the key=value lines, repeated keys as lists, and ignores empty values and noise', () => {
    const probe = parseHostProbe(
      [
        'home=/home/me',
        'real=/usr/bin/node',
        'real=/opt/x/bin/claude',
        'command=/opt/x/bin/claude',
        'gitdir=',
        'bwrap=/usr/bin/bwrap',
        'version=bubblewrap 0.8.0',
        'copied=.gitconfig',
        'copied=.claude.json',
        'a motd line without a key',
        'net=/tmp/hangar-net-1',
      ].join('\n'),
    )
    expect(probe).toEqual({
      home: '/home/me',
      reals: ['/usr/bin/node', '/opt/x/bin/claude'],
      command: '/opt/x/bin/claude',
      bwrap: '/usr/bin/bwrap',
      version: 'bubblewrap 0.8.0',
      copied: ['.gitconfig', '.claude.json'],
      net: '/tmp/hangar-net-1',
    })
  })

  it('says why a host cannot sandbox, with the fix', () => {
    expect(hostUnavailable(PROBE, 'box')).toBeUndefined()
    expect(hostUnavailable({ home: '/h', reals: [], copied: [] }, 'box (me@h)')).toMatch(
      /^box \(me@h\): bubblewrap is not installed there, so runs there are not sandboxed; install it .*apt-get install bubblewrap/,
    )
    expect(hostUnavailable({ ...PROBE, refused: 'setting up uid map: Permission denied' }, 'box')).toMatch(
      /cannot create a sandbox there \(setting up uid map: Permission denied\).*user namespaces/,
    )
    const { node: _node, ...noNode } = PROBE
    expect(hostUnavailable(noNode, 'box')).toMatch(/node is not installed there/)
  })
})

describe('hostLayout', () => {
  const run = {
    remoteRoot: '/home/me/hangar',
    cwd: '/home/me/hangar/workspaces/k1',
    runDir: '/home/me/hangar/runs/run_1',
    home: '/home/me/hangar/sandbox-homes/abc',
  }

  it('hides the host home and the target dir, shows the CLI install again, binds the run writable', () => {
    const layout = hostLayout(PROBE, run, { readOnly: ['~/.cargo'], writable: ['/srv/cache'] })
    expect(layout).toEqual({
      hidden: ['/home/me', '/home/me/hangar'],
      readOnly: ['/home/me/.npm/lib/node_modules', '/home/me/hangar/cache.git', '/home/me/.cargo'],
      writable: [run.cwd, run.runDir, run.home, '/home/me/hangar/cache.git/worktrees/k1', '/srv/cache'],
      readOnlyLast: ['/tmp/hangar-net-abc', '/home/me/hangar/runs/run_1/pgid'],
      cwd: run.cwd,
    })
  })

  it('refuses a workspace that contains the home', () => {
    expect(() =>
      hostLayout({ ...PROBE, home: '/home/me/hangar/workspaces/k1/inner' }, run, {
        readOnly: [],
        writable: [],
      }),
    ).toThrow(/contains .* which a sandbox hides/)
  })

  it('wraps the plan: bubblewrap, then the host node running the forwarder, then the CLI as resolved there', () => {
    const layout = hostLayout(PROBE, run, { readOnly: [], writable: [] })
    const plan = wrapOnHost(
      { command: '/local/claude', args: ['-p', 'hi'], env: {}, stdin: null, files: [] },
      PROBE,
      layout,
      [{ port: 7456, socket: '/tmp/hangar-net-abc/proxy.sock' }],
      run.runDir,
    )
    expect(plan.command).toBe('/usr/bin/bwrap')
    const inner = plan.args.slice(plan.args.indexOf('--') + 1)
    expect(inner).toEqual([
      '/usr/bin/node',
      '/home/me/hangar/runs/run_1/hangar-forwarder.mjs',
      '[{"port":7456,"socket":"/tmp/hangar-net-abc/proxy.sock"}]',
      '--',
      '/home/me/.npm/bin/claude',
      '-p',
      'hi',
    ])
    expect(plan.args.slice(0, 2)).toEqual(['--die-with-parent', '--new-session'])
    expect(plan.files.map((file) => file.path)).toEqual(['/home/me/hangar/runs/run_1/hangar-forwarder.mjs'])
  })
})

describe('HOST_PROBE (run by the local sh, as a host would)', () => {
  let root: string
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-probe-test-'))
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  async function probe(env: Record<string, string>, files: string[] = []) {
    const home = path.join(root, 'home')
    const workspace = path.join(root, 'hangar', 'workspaces', 'k1')
    const gitDir = path.join(root, 'hangar', 'cache.git', 'worktrees', 'k1')
    await mkdir(workspace, { recursive: true })
    await mkdir(gitDir, { recursive: true })
    await mkdir(path.join(home, '.claude'), { recursive: true })
    await writeFile(path.join(home, '.claude.json'), '{"signed":"in"}')
    await writeFile(path.join(workspace, '.git'), `gitdir: ${gitDir}\n`)
    await writeFile(path.join(gitDir, 'commondir'), '../..\n')
    await symlink(process.execPath, path.join(root, 'linked-node')).catch(() => {})
    const { stdout } = await run(
      'sh',
      [
        '-c',
        HOST_PROBE,
        'sh',
        path.join(root, 'hangar', 'runs', 'run_1'),
        workspace,
        path.join(root, 'no-such-cli'),
        'sh',
        path.join(root, 'hangar', 'sandbox-homes', 'h1'),
        '1',
        path.join(root, 'linked-node'),
        ...files,
      ],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...env } },
    )
    return parseHostProbe(stdout)
  }

  it('finds bubblewrap and node, resolves the CLI and the git dirs, makes the net dir and copies the login', async () => {
    const found = await probe({}, ['.gitconfig', '.claude.json', '.claude/.credentials.json'])
    expect(found.home).toBe(path.join(root, 'home'))
    expect(found.bwrap).toMatch(/bwrap$/)
    expect(found.version).toMatch(/^bubblewrap \d/)
    expect(found.refused).toBeUndefined()
    expect(found.node).toMatch(/node$/)
    expect(found.command).toMatch(/\/(da|ba)?sh$/)
    expect(found.reals).toContain(found.command)
    expect(found.reals).toContain(process.execPath)
    expect(found.gitDir).toBe(path.join(root, 'hangar', 'cache.git', 'worktrees', 'k1'))
    expect(found.commonDir).toBe(path.join(root, 'hangar', 'cache.git'))
    expect(found.net).toMatch(/^\/tmp\/hangar-net-/)
    expect(found.copied).toEqual(['.claude.json'])
    expect(await readFile(path.join(root, 'hangar', 'sandbox-homes', 'h1', '.claude.json'), 'utf8')).toBe(
      '{"signed":"in"}',
    )
    expect(hostUnavailable(found, 'box')).toBeUndefined()
    // Named beside the run's directory, where the agent cannot rewrite it, for the cleanup.
    expect(await readFile(path.join(root, 'hangar', 'runs', 'run_1.net'), 'utf8')).toBe(`${found.net}\n`)
    await rm(found.net!, { recursive: true })
  })

  it('says bubblewrap is missing when HANGAR_BWRAP names a missing binary, and makes nothing', async () => {
    const found = await probe({ HANGAR_BWRAP: path.join(root, 'no-bwrap') })
    expect(found.bwrap).toBeUndefined()
    expect(found.net).toBeUndefined()
    expect(hostUnavailable(found, 'box')).toMatch(/bubblewrap is not installed there/)
  })
})

describe('openRemoteSandbox (its host commands run by the local sh)', () => {
  let root: string
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-remote-box-'))
    await mkdir(path.join(root, 'workspaces', 'k1'), { recursive: true })
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  /** A connection whose "host" is this machine: the remote command line goes to sh. */
  const runHere = async (command: string) => {
    const { stdout, stderr } = await run('sh', ['-c', command])
    return { code: 0, stdout: Buffer.from(stdout), stderr }
  }
  const local = {
    target: { name: 'box', ssh: 'me@box' },
    run: runHere,
    check: (_what: string, command: string) => runHere(command),
  } as unknown as SshConnection

  const request = (executable: string) => ({
    runId: 'run_1',
    agent: 'far',
    adapterId: 'claude-code',
    executable: { path: executable },
    remoteRoot: root,
    cwd: path.join(root, 'workspaces', 'k1'),
    runDir: path.join(root, 'runs', 'run_1'),
    useLogin: false,
    proxyOrigin: 'http://127.0.0.1:7456',
    log: silentLogger,
  })
  const settings = { mode: 'workspace' as const, paths: { readOnly: [], writable: [] }, hosts: [] }

  it('opens: the record names the host, the forward is a socket, and close removes the net dir', async () => {
    const opened = await openRemoteSandbox(local, settings, request(process.execPath))
    if (!('handle' in opened)) throw new Error(opened.unsandboxed.reason)
    const { handle } = opened
    expect(handle.record).toMatchObject({
      mode: 'workspace',
      by: expect.stringMatching(/^bubblewrap .* on box$/),
    })
    // Under the workspace's key (k1), so the host's FORGET of that workspace removes it.
    expect(handle.home).toMatch(new RegExp(`^${root}/sandbox-homes/k1/[0-9a-f]{24}$`))
    const sockets = 'sockets' in handle.forward ? handle.forward.sockets : []
    expect(sockets).toEqual([
      { hostSocket: expect.stringMatching(/^\/tmp\/hangar-net-.*\/proxy\.sock$/), to: '127.0.0.1:7456' },
    ])
    expect(
      handle.endpoint({ baseUrl: 'http://127.0.0.1:7456/p/run_1', apiKey: 'k', family: 'anthropic' }),
    ).toMatchObject({
      baseUrl: 'http://127.0.0.1:7456/p/run_1',
    })
    const net = path.dirname(sockets[0]!.hostSocket)
    expect(existsSync(net)).toBe(true)
    await handle.close()
    expect(existsSync(net)).toBe(false)
    expect(existsSync(path.join(root, 'runs', 'run_1.net'))).toBe(false)
  })

  it('fails a run whose CLI the host does not have, leaving no net dir behind', async () => {
    await expect(
      openRemoteSandbox(local, settings, request(path.join(root, 'no-such-cli'))),
    ).rejects.toMatchObject({
      code: 'sandbox_unavailable',
      message: expect.stringMatching(/no-such-cli is not installed on box \(me@box\)/),
    })
    expect(existsSync(path.join(root, 'runs', 'run_1.net'))).toBe(false)
  })
})
