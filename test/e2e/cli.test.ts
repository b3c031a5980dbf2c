// The hangar CLI as a user runs it: the built binary, a temp data dir, real SQLite and PostgreSQL.
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createCredentialsService } from '../../src/store/credentials-service.js'
import { generateKeyEntry, parseKeyring } from '../../src/store/keyring.js'
import { openStore } from '../../src/store/store.js'
import { createVault } from '../../src/store/vault.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import { freshPostgresUrl, makeTempDir } from '../helpers/store-engines.js'

/** One line, no stack trace: what users must see on an error. */
function expectOneLineError(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split('\n')
  const errorLines = lines.filter((line) => line.startsWith('hangar: error:'))
  expect(errorLines).toHaveLength(1)
  expect(errorLines[0]).toMatch(pattern)
  expect(stderr).not.toMatch(/\n\s+at /)
}

describe('cli', () => {
  it('prints its version', async () => {
    const result = await runHangar(['--version'])
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('prints --help from the built binary (every command: src/cli/program.test.ts, in process)', async () => {
    for (const command of [[], ['runs', 'list']]) {
      const result = await runHangar([...command, '--help'])
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(`Usage: hangar${command.length > 0 ? ` ${command.join(' ')}` : ''}`)
    }
  })

  it('exits 2 on an unknown command or a bad flag value', async () => {
    expect((await runHangar(['frobnicate'])).code).toBe(2)
    const dataDir = await makeTempDir()
    const result = await runHangar([
      'token',
      'create',
      '--name',
      'x',
      '--expires-in',
      'soon',
      '--data-dir',
      dataDir,
    ])
    expect(result.code).toBe(2)
    expectOneLineError(result.stderr, /--expires-in "soon" is not a duration.*30d/)
    // Compared attempts run each agent's own profile, and need one agent at least.
    const clash = await runHangar(['run', '--agents', 'codex', '--agent', 'x', 'p', '--data-dir', dataDir])
    expect(clash.code).toBe(2)
    expectOneLineError(clash.stderr, /--agent does not go with --agents/)
    const none = await runHangar(['run', '--agents', ',', 'p', '--data-dir', dataDir])
    expect(none.code).toBe(2)
    expectOneLineError(none.stderr, /--agents: name at least one agent; e\.g\. --agents claude-code,codex/)
  })

  it('creates, lists and revokes tokens, with the documented JSON', async () => {
    const dataDir = await makeTempDir()
    const created = await runHangar([
      'token',
      'create',
      '--name',
      'ci',
      '--expires-in',
      '30d',
      '--json',
      '--data-dir',
      dataDir,
    ])
    expect(created.code).toBe(0)
    const token = JSON.parse(created.stdout) as { id: string; name: string; token: string; expiresAt: string }
    expect(token).toMatchObject({ name: 'ci', token: expect.stringMatching(/^hgr_/) })
    const days = (Date.parse(token.expiresAt) - Date.now()) / 86_400_000
    expect(days).toBeGreaterThan(29.9)
    expect(days).toBeLessThan(30.1)

    const approve = await runHangar([
      'token',
      'create',
      '--name',
      'mcp',
      '--scope',
      'approve',
      '--json',
      '--data-dir',
      dataDir,
    ])
    expect(JSON.parse(approve.stdout).scopes).toEqual(['api', 'approve'])

    const listed = JSON.parse(
      (await runHangar(['token', 'list', '--json', '--data-dir', dataDir])).stdout,
    ) as {
      id: string
    }[]
    expect(listed.map((item) => item.id).sort()).toEqual([token.id, JSON.parse(approve.stdout).id].sort())
    expect(JSON.stringify(listed)).not.toContain(token.token)

    const table = await runHangar(['token', 'list', '--data-dir', dataDir])
    expect(table.stdout).toMatch(/^ID\s+NAME\s+KIND/)
    expect(table.stdout).toContain(token.id)

    expect((await runHangar(['token', 'revoke', token.id, '--data-dir', dataDir])).code).toBe(0)
    const after = JSON.parse(
      (await runHangar(['token', 'list', '--json', '--data-dir', dataDir])).stdout,
    ) as { id: string }[]
    expect(after.map((item) => item.id)).not.toContain(token.id)

    const missing = await runHangar(['token', 'revoke', 'nosuchtoken', '--data-dir', dataDir])
    expect(missing.code).toBe(1)
    expectOneLineError(missing.stderr, /no token nosuchtoken.*hangar token list/)
  })

  it('refuses a malformed hangar.yaml naming file, line and key, and touches nothing', async () => {
    const project = await makeTempDir()
    const dataDir = await makeTempDir()
    await writeFile(
      path.join(project, 'hangar.yaml'),
      'agents:\n  reviewer:\n    adapter: claude-code\n    colour: blue\n',
    )
    await mkdir(path.join(project, 'src'))
    const result = await runHangar(['token', 'list', '--data-dir', dataDir], {
      cwd: path.join(project, 'src'),
    })
    expect(result.code).toBe(2)
    expectOneLineError(result.stderr, /hangar\.yaml:4:5: agents\.reviewer\.colour: unknown key "colour"/)
    expect(await readdir(dataDir)).toEqual([])
  })

  it('refuses a bad --database URL with exit 2 and an unreachable PostgreSQL with exit 1', async () => {
    const dataDir = await makeTempDir()
    const bad = await runHangar([
      'token',
      'list',
      '--database',
      'mongodb://localhost/x',
      '--data-dir',
      dataDir,
    ])
    expect(bad.code).toBe(2)
    expectOneLineError(bad.stderr, /not supported.*postgres:\/\//)

    const down = await runHangar(['token', 'list', '--data-dir', dataDir], {
      env: cleanEnv({ HANGAR_DATABASE_URL: 'postgres://hangar:pw-secret@127.0.0.1:1/hangar' }),
    })
    expect(down.code).toBe(1)
    expectOneLineError(down.stderr, /cannot reach PostgreSQL at postgres:\/\/hangar:\*\*\*@127\.0\.0\.1:1/)
    expect(down.stderr).not.toContain('pw-secret')
  })

  it('reports a data dir that cannot be written', async () => {
    const parent = await makeTempDir()
    await writeFile(path.join(parent, 'blocker'), '')
    const result = await runHangar(['token', 'list', '--data-dir', path.join(parent, 'blocker', 'data')])
    expect(result.code).toBe(1)
    expectOneLineError(result.stderr, /data dir .*blocker\/data is not writable.*--data-dir/)
  })

  it('prints sign-in and invite links, and refuses a duplicate or invalid user name', async () => {
    const dataDir = await makeTempDir()
    const login = await runHangar(['login', '--data-dir', dataDir])
    expect(login.code).toBe(0)
    expect(login.stdout.trim()).toMatch(/^http:\/\/127\.0\.0\.1:7456\/login#hgl_/)
    expect(login.stderr).toContain('hangar up')

    const added = await runHangar(['users', 'add', 'dana', '--json', '--data-dir', dataDir])
    expect(JSON.parse(added.stdout)).toMatchObject({
      name: 'dana',
      role: 'member',
      inviteUrl: expect.stringContaining('/login#hgl_'),
    })
    const again = await runHangar(['users', 'add', 'dana', '--data-dir', dataDir])
    expect(again.code).toBe(1)
    expectOneLineError(again.stderr, /already exists/)
    expect((await runHangar(['users', 'add', 'no spaces', '--data-dir', dataDir])).code).toBe(2)

    const users = JSON.parse(
      (await runHangar(['users', 'list', '--json', '--data-dir', dataDir])).stdout,
    ) as { role: string }[]
    expect(users.map((user) => user.role).sort()).toEqual(['member', 'owner'])
  })

  it('rewraps stored keys under a rotated instance key', async () => {
    const dataDir = await makeTempDir()
    const oldKey = generateKeyEntry('old')
    const newKey = generateKeyEntry('new')
    const store = await openStore({ dataDir })
    const owner = await store.users.create({ name: 'owner', role: 'owner' })
    const vault = createVault(parseKeyring(oldKey))
    await createCredentialsService({ store, vaultState: { vault } }).put('system', owner.id, 'openai', {
      apiKey: 'sk-test-rotation-key-0001',
    })
    await store.close()

    const result = await runHangar(['secrets', 'rewrap', '--json', '--data-dir', dataDir], {
      env: cleanEnv({ HANGAR_SECRET_KEYS: `${newKey},${oldKey}` }),
    })
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ rewrapped: 1, current: 0, failed: [] })

    const reopened = await openStore({ dataDir })
    const credentials = createCredentialsService({
      store: reopened,
      vaultState: { vault: createVault(parseKeyring(newKey)) },
    })
    expect(await credentials.revealKey(owner.id, 'openai')).toBe('sk-test-rotation-key-0001')
    await reopened.close()
  })

  it('works against PostgreSQL, where the vault needs HANGAR_SECRET_KEYS', async () => {
    const dataDir = await makeTempDir()
    const database = await freshPostgresUrl()
    const created = await runHangar([
      'token',
      'create',
      '--name',
      'pg',
      '--json',
      '--database',
      database,
      '--data-dir',
      dataDir,
    ])
    expect(created.code).toBe(0)
    const doctor = await runHangar(['doctor', '--json', '--database', database, '--data-dir', dataDir])
    expect(doctor.code).toBe(0)
    const checks = JSON.parse(doctor.stdout) as { name: string; status: string; detail: string }[]
    expect(checks.find((check) => check.name === 'database')).toMatchObject({ status: 'ok' })
    expect(checks.find((check) => check.name === 'vault')).toMatchObject({ status: 'warn' })
    expect(checks.find((check) => check.name === 'vault')?.detail).toContain('HANGAR_SECRET_KEYS')
    const rewrap = await runHangar(['secrets', 'rewrap', '--database', database, '--data-dir', dataDir])
    expect(rewrap.code).toBe(1)
    expectOneLineError(rewrap.stderr, /HANGAR_SECRET_KEYS/)
  })

  it('reports every check with hangar doctor', async () => {
    const dataDir = await makeTempDir()
    const result = await runHangar(['doctor', '--data-dir', dataDir])
    expect(result.code).toBe(0)
    for (const name of ['node', 'config', 'data dir', 'database', 'vault', 'daemon']) {
      expect(result.stdout).toMatch(new RegExp(`^[✓!✗] ${name}:`, 'm'))
    }
  })
})
