// Issue 21, backups: `hangar backup FILE` while the built daemon runs and writes, `hangar restore FILE`
// into a new data dir, and a daemon started there serves the same conversations, accepts the same token
// and decrypts the vaulted provider key. The file is never overwritten; restore never writes into a
// data dir that holds anything.
import { execFileSync } from 'node:child_process'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime } from '../../src/main.js'
import { createApiClient } from '../helpers/api-client.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const PROVIDER_KEY = 'sk-ant-backup-roundtrip-key-0000000021'

describe('hangar backup and restore round trip (issue 21)', { timeout: 180_000 }, () => {
  let root: string
  let project: string
  let daemon: RunningDaemon | undefined
  let restoredDaemon: RunningDaemon | undefined
  let connection = { url: '', token: '' }
  const { api } = createApiClient(() => connection)

  beforeAll(async () => {
    root = await makeTempDir('hangar-backup-e2e-')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
  })

  afterAll(async () => {
    await daemon?.stop()
    await restoredDaemon?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('restores a live backup to a daemon with the same conversations, tokens and vaulted keys', async () => {
    const original = path.join(root, 'original')
    const options = { cwd: project, timeoutMs: 60_000 }
    daemon = await startDaemon(['--data-dir', original], options)
    const created = await runHangar(
      ['token', 'create', '--name', 'backup', '--json', '--data-dir', original],
      options,
    )
    expect(created.code, created.stderr).toBe(0)
    const token = (JSON.parse(created.stdout) as { token: string }).token
    connection = { url: daemon.url, token }

    const saved = await api('PUT', '/api/settings/providers/anthropic', { apiKey: PROVIDER_KEY })
    expect(saved.status, JSON.stringify(saved.json)).toBe(200)
    // The built-in agent on that key: conversations can be opened with no agent CLI installed.
    const chosen = await api('PUT', '/api/settings/builtin', { provider: 'anthropic' })
    expect(chosen.status, JSON.stringify(chosen.json)).toBe(200)
    const conversation = await api<{ id: string }>('POST', '/api/conversations', { title: 'Keep me' })
    expect(conversation.status, JSON.stringify(conversation.json)).toBe(201)

    // The daemon keeps writing while the backup is taken.
    let writing = true
    let writes = 0
    const writer = (async () => {
      while (writing) {
        const response = await api('POST', '/api/conversations', { title: `busy ${writes}` })
        expect(response.status).toBe(201)
        writes += 1
      }
    })()
    const backupFile = path.join(root, 'hangar.backup')
    let backup
    try {
      while (writes < 2) await new Promise((resolve) => setTimeout(resolve, 20))
      backup = await runHangar(['backup', backupFile, '--data-dir', original], options)
    } finally {
      writing = false
      await writer
    }
    expect(backup.code, backup.stderr).toBe(0)
    expect(backup.stdout.trim()).toBe(backupFile)
    expect(backup.stderr).toMatch(/holds the instance key/)
    expect((await stat(backupFile)).mode & 0o777).toBe(0o600)

    // Never overwritten: a second backup to the same name is refused and the first is intact.
    const firstBackup = await readFile(backupFile)
    const again = await runHangar(['backup', backupFile, '--data-dir', original], options)
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^hangar: error: .*already exists; hangar backup never overwrites/)
    expect((await readFile(backupFile)).equals(firstBackup)).toBe(true)

    // Restore only into an empty data dir.
    const occupied = path.join(root, 'occupied')
    await mkdir(occupied)
    await writeFile(path.join(occupied, 'keep.txt'), 'x')
    const refused = await runHangar(['restore', backupFile, '--data-dir', occupied], options)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/is not empty; nothing was restored/)
    expect(await readdir(occupied)).toEqual(['keep.txt'])

    const restoredDir = path.join(root, 'restored')
    const restore = await runHangar(['restore', backupFile, '--data-dir', restoredDir, '--json'], options)
    expect(restore.code, restore.stderr).toBe(0)
    expect(JSON.parse(restore.stdout)).toMatchObject({
      file: backupFile,
      files: ['hangar.db', 'secret.key'],
      hangarVersion: expect.any(String),
    })
    await daemon.stop()
    daemon = undefined

    restoredDaemon = await startDaemon(['--data-dir', restoredDir], options)
    connection = { url: restoredDaemon.url, token }
    const listed = await api<{ id: string; title: string }[]>('GET', '/api/conversations?search=Keep')
    expect(listed.status, JSON.stringify(listed.json)).toBe(200)
    expect(listed.json.map((item) => item.id)).toEqual([conversation.json.id])
    const busy = await api<{ title: string }[]>('GET', '/api/conversations?search=busy')
    expect(busy.json.length).toBeGreaterThanOrEqual(2)
    const provider = await api<{ keyConfigured: boolean; keyLast4: string }>(
      'GET',
      '/api/settings/providers/anthropic',
    )
    expect(provider.json).toMatchObject({ keyConfigured: true, keyLast4: PROVIDER_KEY.slice(-4) })
    await restoredDaemon.stop()
    restoredDaemon = undefined

    // The restored key file decrypts the vaulted key (the envelope is bound to the key it was made with).
    const runtime = await createRuntime({
      dataDir: restoredDir,
      config: parseConfig(''),
      projectDir: project,
      env: cleanEnv(),
      logLevel: 'silent',
    })
    try {
      expect(await runtime.credentials.revealKey(runtime.owner.id, 'anthropic')).toBe(PROVIDER_KEY)
    } finally {
      await runtime.close()
    }
  })

  it('documents both commands in --help', async () => {
    for (const command of ['backup', 'restore']) {
      const help = await runHangar([command, '--help'])
      expect(help.code, command).toBe(0)
      expect(help.stdout).toContain(`Usage: hangar ${command} [options] <file>`)
    }
  })

  it('refuses on PostgreSQL with the pg_dump command to use', async () => {
    const result = await runHangar(
      [
        'backup',
        path.join(root, 'pg.backup'),
        '--database',
        'postgres://hangar:s3cret@127.0.0.1:5432/hangar',
      ],
      { cwd: project },
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/PostgreSQL .*pg_dump --format=custom/)
    expect(result.stderr).not.toContain('s3cret')
    await expect(stat(path.join(root, 'pg.backup'))).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
