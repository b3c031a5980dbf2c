// hangar backup / restore at the store level (issue 21): a snapshot taken while another connection keeps
// writing restores to a store with the same rows and the same instance key; nothing is ever overwritten,
// and a damaged or foreign file restores nothing.
import { promises as fs } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { makeTempDir } from '../../test/helpers/store-engines.js'
import { restoreBackup, verifyBackup, writeBackup } from './backup.js'
import { KEY_FILE_NAME, loadKeyring } from './keyring.js'
import { openStore } from './store.js'

const cleanups: string[] = []
afterEach(async () => {
  for (const dir of cleanups.splice(0)) await fs.rm(dir, { recursive: true, force: true })
})

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('hangar-backup-')
  cleanups.push(dir)
  return dir
}

/** A data dir with a store (one conversation per title) and an instance key file. */
async function dataDirWith(titles: string[]): Promise<string> {
  const dataDir = await tempDir()
  const store = await openStore({ dataDir })
  const owner = await store.users.create({ name: 'alice', role: 'owner' })
  for (const title of titles)
    await store.forUser(owner.id).conversations.create({ title, profile: 'default', project: '/p' })
  await store.close()
  await loadKeyring({ envValue: undefined, dataDir, engine: 'sqlite' })
  return dataDir
}

async function backupOf(dataDir: string): Promise<string> {
  const target = path.join(await tempDir(), 'hangar.backup')
  await writeBackup({
    storeFile: path.join(dataDir, 'hangar.db'),
    keyFile: path.join(dataDir, KEY_FILE_NAME),
    target,
    hangarVersion: '0.0.0-test',
  })
  return target
}

describe('hangar backup and restore (store level)', () => {
  it('snapshots a store that another connection keeps writing, and restores the same rows and key', async () => {
    const dataDir = await dataDirWith(['first'])
    const writer = await openStore({ dataDir })
    const owner = (await writer.users.findOwner())!
    const conversations = writer.forUser(owner.id).conversations
    let writes = 0
    let writing = true
    const loop = (async () => {
      while (writing) {
        await conversations.create({ title: `busy ${writes}`, profile: 'default', project: '/p' })
        writes += 1
        await new Promise((resolve) => setImmediate(resolve))
      }
    })()
    try {
      while (writes < 5) await new Promise((resolve) => setTimeout(resolve, 5))
      const target = path.join(await tempDir(), 'hangar.backup')
      const summary = await writeBackup({
        storeFile: path.join(dataDir, 'hangar.db'),
        keyFile: path.join(dataDir, KEY_FILE_NAME),
        target,
        hangarVersion: '0.0.0-test',
      })
      expect(summary.files).toEqual(['hangar.db', KEY_FILE_NAME])
      expect((await fs.stat(target)).mode & 0o777).toBe(0o600)
      writing = false
      await loop

      const restored = path.join(await tempDir(), 'restored')
      await restoreBackup(target, restored)
      expect(await fs.readFile(path.join(restored, KEY_FILE_NAME))).toEqual(
        await fs.readFile(path.join(dataDir, KEY_FILE_NAME)),
      )
      expect((await fs.stat(path.join(restored, KEY_FILE_NAME))).mode & 0o777).toBe(0o600)
      const copy = await openStore({ dataDir: restored })
      try {
        expect(await copy.integrityCheck()).toBe('ok')
        const titles = (await copy.forUser(owner.id).conversations.list({ limit: 10_000 })).map(
          (c) => c.title,
        )
        expect(titles).toContain('first')
        // A consistent snapshot: some prefix of the writes, with no gap.
        const busy = titles.filter((title) => title.startsWith('busy ')).length
        expect(busy).toBeGreaterThanOrEqual(5)
        for (let index = 0; index < busy; index += 1) expect(titles).toContain(`busy ${index}`)
      } finally {
        await copy.close()
      }
    } finally {
      writing = false
      await loop
      await writer.close()
    }
  })

  it('refuses to overwrite an existing file and leaves it as it was', async () => {
    const dataDir = await dataDirWith(['a'])
    const target = path.join(await tempDir(), 'taken')
    await fs.writeFile(target, 'precious')
    await expect(
      writeBackup({
        storeFile: path.join(dataDir, 'hangar.db'),
        keyFile: path.join(dataDir, KEY_FILE_NAME),
        target,
        hangarVersion: '0.0.0-test',
      }),
    ).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/already exists.*never overwrites/),
    })
    expect(await fs.readFile(target, 'utf8')).toBe('precious')
    expect(await fs.readdir(path.dirname(target))).toEqual(['taken'])
  })

  it('refuses a data dir that does not exist as a store, naming it', async () => {
    const empty = await tempDir()
    await expect(
      writeBackup({
        storeFile: path.join(empty, 'hangar.db'),
        keyFile: path.join(empty, KEY_FILE_NAME),
        target: path.join(empty, 'out'),
        hangarVersion: '0.0.0-test',
      }),
    ).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining(empty) })
    expect(await fs.readdir(empty)).toEqual([])
  })

  it('refuses a file that is not a SQLite store, writing nothing', async () => {
    const dataDir = await tempDir()
    await fs.writeFile(path.join(dataDir, 'hangar.db'), 'these are my notes, not a database'.repeat(100))
    const target = path.join(await tempDir(), 'out.backup')
    await expect(
      writeBackup({
        storeFile: path.join(dataDir, 'hangar.db'),
        keyFile: path.join(dataDir, KEY_FILE_NAME),
        target,
        hangarVersion: '0.0.0-test',
      }),
    ).rejects.toMatchObject({
      code: 'database_unavailable',
      message: expect.stringContaining('SQLITE_NOTADB'),
    })
    expect(await fs.readdir(path.dirname(target))).toEqual([])
  })

  it('restores only into an empty or new data dir', async () => {
    const backup = await backupOf(await dataDirWith(['a']))
    const occupied = await tempDir()
    await fs.writeFile(path.join(occupied, 'notes.txt'), 'mine')
    await expect(restoreBackup(backup, occupied)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/not empty; nothing was restored/),
    })
    expect(await fs.readdir(occupied)).toEqual(['notes.txt'])
    const empty = await tempDir()
    await restoreBackup(backup, empty)
    expect((await fs.readdir(empty)).sort()).toEqual(['hangar.db', KEY_FILE_NAME])
  })

  it.each([
    [
      'a flipped byte',
      (bytes: Buffer) =>
        Buffer.concat([bytes.subarray(0, -10), Buffer.from([bytes.at(-10)! ^ 1]), bytes.subarray(-9)]),
      /does not match its checksum/,
    ],
    [
      'a truncated file',
      (bytes: Buffer) => bytes.subarray(0, bytes.length - 100),
      /bytes long where its header says/,
    ],
    ['another file', () => Buffer.from('SQLite format 3\0 not a backup'), /not a Hangar backup/],
  ])('verifies the checksums before writing anything: %s is refused', async (_name, damage, message) => {
    const backup = await backupOf(await dataDirWith(['a']))
    await fs.writeFile(backup, damage(await fs.readFile(backup)))
    const restored = path.join(await tempDir(), 'restored')
    await expect(verifyBackup(backup)).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(restoreBackup(backup, restored)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(message),
    })
    await expect(fs.stat(restored)).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
