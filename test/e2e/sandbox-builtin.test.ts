// The built-in agent with `sandbox: workspace`: its approved run_command runs in bubblewrap (real), so the
// command an injected prompt asks for cannot read the daemon user's keys, the data dir or another process's
// environment, nor reach loopback services or the internet; it can write its workspace.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, reply, startMockModelServer } from '../fixtures/mock-model-server.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface Envelope {
  type: string
  [field: string]: unknown
}

const KEY = 'sk-ant-test-sandbox-0123456789'

describe('built-in agent in a sandbox', () => {
  let mock: MockModelServer
  let root: string
  let dataDir: string
  let home: string
  let project: string
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-sandbox-builtin-')
    dataDir = path.join(root, 'data')
    home = path.join(root, 'home')
    project = path.join(root, 'project')
    await mkdir(path.join(home, '.ssh'), { recursive: true })
    await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'FAKE PRIVATE KEY')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    await writeFile(
      path.join(project, 'hangar.yaml'),
      'agents:\n  boxed: { adapter: builtin, sandbox: workspace }\n',
    )
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: home,
      HANGAR_DATA_DIR: dataDir,
      ANTHROPIC_API_KEY: KEY,
      ANTHROPIC_BASE_URL: mock.url,
    })
  })

  afterAll(async () => {
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('runs the approved command confined, and records the sandbox on the run', async () => {
    const outside = path.join(root, 'escaped.txt')
    const at = (file: string) => `"$(echo ${Buffer.from(file).toString('base64')} | base64 -d)"`
    const connect = (name: string, host: string, port: number) =>
      `node -e "require('net').connect(${port},'${host}').on('error',e=>console.log('${name} '+e.code)).on('connect',()=>console.log('${name} connected'))"`
    const command = `{ ${[
      `cat ${at(path.join(dataDir, 'secret.key'))} && echo SECRET-READ`,
      `cat ${at(path.join(home, '.ssh', 'id_ed25519'))} && echo SSH-READ`,
      `cat ${at(`/proc/${process.pid}/environ`)} > /dev/null && echo ENVIRON-READ`,
      // Every process the sandbox can see: none holds the provider key (the daemon is not among them).
      `cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -q ${at(KEY)} && echo KEY-IN-PROC`,
      // Planted for the built-in agent's own file tools, which run in the daemon (next test).
      `ln -s ${at(path.join(dataDir, 'secret.key'))} key-link`,
      'ln -s /proc/self/environ env-link',
      `echo x > ${at(outside)} && echo OUTSIDE-WRITTEN`,
      connect('postgres', '127.0.0.1', 5432),
      connect('public', '1.1.1.1', 443),
      'echo PROBE-DONE',
    ]
      .map((line) => `${line};`)
      .join(' ')} } > probe.txt 2>&1`
    const run = await runHangar(
      ['run', '--agent', 'boxed', '--json', `Run it. SHELL64=${Buffer.from(command).toString('base64url')}`],
      { env, cwd: project, timeoutMs: 60_000 },
    )
    expect(run.code, run.stderr).toBe(3)
    const envelopes = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Envelope)
    expect(envelopes[0]).toMatchObject({
      type: 'run-start',
      sandbox: { mode: 'workspace', by: expect.stringContaining('bubblewrap') },
    })
    const listed = JSON.parse(
      (await runHangar(['actions', 'list', '--json'], { env, cwd: project })).stdout,
    ) as { id: string; tool: string }[]
    expect(listed).toMatchObject([{ tool: 'run_command' }])
    // Confirmed where the profile is declared (the project's hangar.yaml decides its sandbox).
    const confirm = await runHangar(['actions', 'confirm', listed[0]!.id], {
      env,
      cwd: project,
      timeoutMs: 60_000,
    })
    expect(confirm.code, confirm.stderr).toBe(0)
    const report = await readFile(path.join(project, 'probe.txt'), 'utf8')
    expect(report).toContain('PROBE-DONE')
    const instanceKey = (await readFile(path.join(dataDir, 'secret.key'), 'utf8')).trim()
    for (const leak of [
      instanceKey,
      'SECRET-READ',
      'FAKE PRIVATE KEY',
      'SSH-READ',
      'ENVIRON-READ',
      'KEY-IN-PROC',
    ])
      expect(report).not.toContain(leak)
    // A write outside lands in the sandbox's own /tmp at most (here the scratch root is under /tmp), never here.
    expect(existsSync(outside)).toBe(false)
    expect(report).toContain('postgres ECONNREFUSED')
    expect(report).toContain('public ENETUNREACH')
  }, 150_000)

  it('keeps its file tools, which run in the daemon, from following what a sandboxed command planted', async () => {
    // The command above left key-link -> <data-dir>/secret.key and env-link -> /proc/self/environ (which,
    // read by the daemon, would be the daemon's own environment with the provider key).
    const instanceKey = (await readFile(path.join(dataDir, 'secret.key'), 'utf8')).trim()
    mock.enqueue(
      reply().tool('read_file', { path: 'key-link' }, { id: 'toolu_key' }).stop('tool_use'),
      reply().tool('read_file', { path: 'env-link' }, { id: 'toolu_env' }).stop('tool_use'),
      reply().text('read both').stop('end_turn'),
    )
    const seen = mock.requests.length
    const run = await runHangar(['run', '--agent', 'boxed', '--json', 'Read the links.'], {
      env,
      cwd: project,
      timeoutMs: 60_000,
    })
    expect(run.code, run.stderr).toBe(0)
    const sent = mock.requests
      .slice(seen)
      .map((request) => request.rawBody)
      .join('\n')
    for (const link of ['key-link', 'env-link'])
      expect(sent).toContain(`Path ${link} is outside the workspace through a symlink`)
    for (const leak of [instanceKey, KEY, 'HANGAR_DATA_DIR']) expect(sent).not.toContain(leak)
    expect(run.stdout).not.toContain(KEY)
  }, 90_000)

  it('fails the run with a fix-it line when bubblewrap is missing', async () => {
    const run = await runHangar(['run', '--agent', 'boxed', '--json', 'Hello. NOTOOL'], {
      env: { ...env, HANGAR_BWRAP: path.join(root, 'no-bwrap') },
      cwd: project,
      timeoutMs: 60_000,
    })
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('"code":"sandbox_unavailable"')
    expect(run.stdout).toContain('bubblewrap was not found')
  }, 90_000)
})
