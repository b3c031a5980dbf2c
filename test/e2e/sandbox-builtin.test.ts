// The built-in agent with `sandbox: workspace`: its approved run_command runs in bubblewrap (real), so the
// command an injected prompt asks for cannot read the daemon user's keys, the data dir or another process's
// environment, nor reach loopback services or the internet; it can write its workspace.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface Envelope {
  type: string
  [field: string]: unknown
}

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
      ANTHROPIC_API_KEY: 'sk-ant-test-sandbox-0123456789',
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
    for (const leak of [instanceKey, 'SECRET-READ', 'FAKE PRIVATE KEY', 'SSH-READ', 'ENVIRON-READ'])
      expect(report).not.toContain(leak)
    // A write outside lands in the sandbox's own /tmp at most (here the scratch root is under /tmp), never here.
    expect(existsSync(outside)).toBe(false)
    expect(report).toContain('postgres ECONNREFUSED')
    expect(report).toContain('public ENETUNREACH')
  }, 150_000)

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
