import { chmod, mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeTempDir } from '../../test/helpers/store-engines.js'
import { openDatabase, ownerOnlyStoreFile, redactDatabaseUrl } from './open-database.js'
import { openStore } from './store.js'

describe('open-database', () => {
  it('refuses a URL with an unsupported scheme, without echoing its password', async () => {
    const dataDir = await makeTempDir()
    const attempt = openDatabase({ dataDir, url: 'mysql://root:hunter22@127.0.0.1/db' })
    await expect(attempt).rejects.toMatchObject({ code: 'database_url_invalid' })
    await expect(attempt).rejects.toThrow(/scheme "mysql:"/)
    await expect(attempt.catch((error: Error) => error.message)).resolves.not.toContain('hunter22')
  })

  it('refuses a postgres URL that does not parse', async () => {
    await expect(
      openDatabase({ dataDir: await makeTempDir(), url: 'postgres://[broken' }),
    ).rejects.toMatchObject({
      code: 'database_url_invalid',
    })
  })

  it('reports an unreachable PostgreSQL clearly and retryably, without the password', async () => {
    const attempt = openDatabase({
      dataDir: await makeTempDir(),
      url: 'postgres://hangar:s3cretpw@127.0.0.1:1/hangar',
      connectTimeoutMs: 2000,
    })
    await expect(attempt).rejects.toMatchObject({ code: 'database_unavailable', retryable: true })
    const message = await attempt.catch((error: Error) => error.message)
    expect(message).toContain('127.0.0.1:1')
    expect(message).not.toContain('s3cretpw')
  })

  it('reports a data dir that cannot be created or written', async () => {
    const parent = await makeTempDir()
    await writeFile(path.join(parent, 'file'), 'not a directory')
    await expect(openDatabase({ dataDir: path.join(parent, 'file', 'data') })).rejects.toMatchObject({
      code: 'data_dir_unwritable',
    })
    if (process.getuid?.() !== 0) {
      const readOnly = path.join(parent, 'ro')
      await mkdir(readOnly)
      await chmod(readOnly, 0o500)
      await expect(openDatabase({ dataDir: readOnly })).rejects.toMatchObject({ code: 'data_dir_unwritable' })
    }
  })

  it('refuses a data dir that every user may write in, sticky or not, and writes nothing there', async () => {
    const dataDir = path.join(await makeTempDir(), 'shared')
    await mkdir(dataDir)
    for (const mode of [0o777, 0o1777, 0o703]) {
      await chmod(dataDir, mode)
      await expect(openStore({ dataDir })).rejects.toMatchObject({
        code: 'data_dir_unwritable',
        message: expect.stringContaining('every user of this machine may write in it'),
        hint: expect.stringContaining(`chmod 700 ${dataDir}`),
      })
      expect(await readdir(dataDir)).toEqual([])
    }
  })

  it("makes the SQLite store its owner's alone, and narrows one an earlier version left readable", async () => {
    const dir = await makeTempDir()
    const file = path.join(dir, 'hangar.db')
    const mode = async (name: string) => (await stat(name)).mode & 0o777
    await ownerOnlyStoreFile(file)
    expect(await mode(file)).toBe(0o600)
    await writeFile(`${file}-wal`, '')
    await chmod(file, 0o644)
    await chmod(`${file}-wal`, 0o664)
    await ownerOnlyStoreFile(file)
    expect([await mode(file), await mode(`${file}-wal`)]).toEqual([0o600, 0o600])
    // Narrowed, not widened.
    await chmod(file, 0o400)
    await ownerOnlyStoreFile(file)
    expect(await mode(file)).toBe(0o400)
    await chmod(file, 0o444)
    await ownerOnlyStoreFile(file)
    expect(await mode(file)).toBe(0o400)
  })

  it('refuses a file that is not a database and leaves it as it was', async () => {
    const dataDir = await makeTempDir()
    await writeFile(path.join(dataDir, 'hangar.db'), 'this is not sqlite '.repeat(100))
    await expect(openStore({ dataDir })).rejects.toMatchObject({ code: 'database_unavailable' })
    expect((await readdir(dataDir)).sort()).toEqual(['hangar.db'])
  })

  it('hides the password in printable locations', () => {
    expect(redactDatabaseUrl('postgres://u:p%40ss@h:5432/d')).toBe('postgres://u:***@h:5432/d')
  })

  it('opens SQLite as hangar.db in the data dir', async () => {
    const dataDir = await makeTempDir()
    const store = await openStore({ dataDir })
    expect(store.engine).toBe('sqlite')
    expect(store.location).toBe(path.join(dataDir, 'hangar.db'))
    await store.close()
    expect(await readdir(dataDir)).toContain('hangar.db')
  })
})
