// `hangar service install`: the unit it writes runs `hangar up` in the foreground under systemd, lets
// hangar's own stop handle the agents (KillMode=mixed), holds no secret, and is checked by systemd's own
// `systemd-analyze verify`. It never overwrites another unit without --force, and --print writes nothing.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { runCli } from '../program.js'
import { renderUnit, unitPath } from '../systemd-unit.js'

async function hangar(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
  const code = await runCli(args, { stdout, stderr, env, cwd })
  return { code, stdout: out, stderr: err }
}

async function scratch() {
  const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-service-'))
  const work = path.join(root, 'work')
  await mkdir(work)
  const env: NodeJS.ProcessEnv = {
    HOME: path.join(root, 'home'),
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HANGAR_DATA_DIR: path.join(root, 'data'),
  }
  return { root, work, env, unit: path.join(root, 'home', '.config', 'systemd', 'user', 'hangar.service') }
}

/** `Key=value` lines of the [Service] section, as systemd reads them (one key may repeat). */
function serviceSettings(unit: string): [string, string][] {
  const section = unit.split('[Service]\n')[1]!.split('\n[')[0]!
  return section
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)])
}

describe('hangar service install', () => {
  it('writes a user unit that runs `hangar up` in the foreground and prints the next commands', async () => {
    const { env, work, unit, root } = await scratch()
    const result = await hangar(['service', 'install', '--user'], env, work)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(`${unit}\n`)
    expect(result.stderr).toContain('systemctl --user daemon-reload && systemctl --user enable --now hangar')
    const text = await readFile(unit, 'utf8')
    const settings = serviceSettings(text)
    const value = (key: string) => settings.filter(([name]) => name === key).map(([, each]) => each)
    const exec = value('ExecStart')[0]!
    // Absolute node and hangar entry point, `up` with no --detach: systemd is the supervisor.
    expect(exec).toMatch(/^"\/[^"]+node[^"]*" "\/[^"]+\/bin\/hangar\.js" "up"$/)
    expect(exec).toContain(`"${process.execPath}"`)
    expect(value('Environment')).toContain(`"HANGAR_DATA_DIR=${path.join(root, 'data')}"`)
    expect(value('Environment')).toContain('"PATH=/usr/local/bin:/usr/bin:/bin"')
    expect(value('EnvironmentFile')).toEqual([`-${path.join(root, 'data', 'service.env')}`])
    expect(value('WorkingDirectory')).toEqual([work])
    expect(value('Restart')).toEqual(['on-failure'])
    expect(value('KillMode')).toEqual(['mixed'])
    expect(Number(value('TimeoutStopSec')[0])).toBeGreaterThan(60)
    expect(value('User')).toEqual([])
    expect(text).toContain('WantedBy=default.target')

    // Again: the same unit is left as it is.
    const again = await hangar(['service', 'install', '--user'], env, work)
    expect(again.code).toBe(0)
    expect(again.stderr).toContain('already installed')
  })

  it('refuses to replace a different unit without --force', async () => {
    const { env, work, unit } = await scratch()
    await mkdir(path.dirname(unit), { recursive: true })
    await writeFile(unit, '[Service]\nExecStart=/bin/true\n')
    const refused = await hangar(['service', 'install', '--user'], env, work)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^hangar: error: .*hangar\.service exists and is not this unit; .*--force/)
    expect(await readFile(unit, 'utf8')).toBe('[Service]\nExecStart=/bin/true\n')
    const forced = await hangar(['service', 'install', '--user', '--force'], env, work)
    expect(forced.code, forced.stderr).toBe(0)
    expect(await readFile(unit, 'utf8')).toContain('KillMode=mixed')
  })

  it('prints a system-wide unit with User= and writes nothing with --print', async () => {
    const { env, work, root } = await scratch()
    const result = await hangar(
      ['service', 'install', '--print', '--run-as', os.userInfo().username],
      env,
      work,
    )
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`User=${os.userInfo().username}\n`)
    expect(result.stdout).toContain('WantedBy=multi-user.target')
    expect(existsSync(path.join(root, 'home'))).toBe(false)
    const json = await hangar(['service', 'install', '--print', '--json'], env, work)
    expect(JSON.parse(json.stdout)).toMatchObject({
      path: '/etc/systemd/system/hangar.service',
      written: false,
      next: expect.arrayContaining([expect.stringContaining('sudo systemctl daemon-reload')]),
    })
  })

  it('asks for the data dir of another account it runs as', async () => {
    const { env, work } = await scratch()
    delete env.HANGAR_DATA_DIR
    const result = await hangar(['service', 'install', '--print', '--run-as', 'somebody-else'], env, work)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^hangar: error: the unit runs as somebody-else.*; pass --data-dir/)
  })

  it('keeps hostile paths from adding directives, and escapes systemd specifiers', () => {
    const base = {
      scope: 'user' as const,
      node: '/usr/bin/node',
      bin: '/opt/hangar/dist/bin/hangar.js',
      workingDirectory: '/home/me',
      path: '/usr/bin',
      version: '1.0.0',
    }
    expect(() => renderUnit({ ...base, dataDir: '/tmp/x\nExecStartPre=/bin/evil' })).toThrow(
      /control character/,
    )
    const unit = renderUnit({ ...base, dataDir: '/srv/100%/"$HOME"' })
    expect(unit).toContain('Environment="HANGAR_DATA_DIR=/srv/100%%/\\"$$HOME\\""')
    expect(unitPath('user', { HOME: '/home/me', XDG_CONFIG_HOME: '/cfg' })).toBe(
      '/cfg/systemd/user/hangar.service',
    )
  })

  it('passes systemd-analyze verify', async () => {
    const { env, work, root } = await scratch()
    const result = await hangar(['service', 'install', '--print'], env, work)
    expect(result.code).toBe(0)
    // verify reads the unit from a file named like the service, and checks ExecStart's binary exists.
    const file = path.join(root, 'hangar.service')
    await writeFile(file, result.stdout)
    const verified = await promisify(execFile)('systemd-analyze', ['verify', file]).catch(
      (error: { stderr?: string; code?: number }) => error,
    )
    const stderr = (verified as { stderr?: string }).stderr ?? ''
    // Only lines about this unit count: the host's own units may have warnings of their own.
    const about = stderr.split('\n').filter((line) => line.includes('hangar.service'))
    expect(about, stderr).toEqual([])
    expect((verified as { code?: number }).code ?? 0, stderr).toBe(0)
  })
})
