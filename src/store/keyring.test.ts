import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import { generateKeyEntry, type Keyring, loadKeyring, parseKeyring } from './keyring.js'

const KEY_A = randomBytes(32).toString('base64')
const KEY_B = randomBytes(32).toString('base64url').replace(/=+$/, '')
const SHORT_KEY = randomBytes(16).toString('base64')
const onWindows = process.platform === 'win32'

function parseError(value: string): AppError {
  try {
    parseKeyring(value)
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
  throw new Error('expected parseKeyring to throw')
}

function loadedKeyring(source: Awaited<ReturnType<typeof loadKeyring>>): Keyring {
  if (source.keyring === null) throw new Error(`expected a keyring, got: ${source.reason}`)
  return source.keyring
}

describe('keyring', () => {
  describe('parseKeyring', () => {
    it('makes the first entry active when several are given', () => {
      const keyring = parseKeyring(` new:${KEY_A} ,\n old:${KEY_B}`)
      expect(keyring.activeKeyId).toBe('new')
      expect([...keyring.keys.keys()]).toEqual(['new', 'old'])
      expect(keyring.keys.get('new')).toEqual(Buffer.from(KEY_A, 'base64'))
      expect(keyring.keys.get('old')?.length).toBe(32)
    })

    it('accepts base64url keys without padding when they decode to 32 bytes', () => {
      expect(parseKeyring(`k_1-x:${KEY_B}`).activeKeyId).toBe('k_1-x')
    })

    it('names the entry by index and kid when a key has the wrong length', () => {
      const error = parseError(`k1:${KEY_A},k2:${SHORT_KEY}`)
      expect(error.code).toBe('config_invalid')
      expect(error.message).toBe(
        'HANGAR_SECRET_KEYS: entry 2 ("k2"): key must be 32 bytes of base64, got 16 bytes',
      )
      expect(error.hint).toBe('generate one with: openssl rand -base64 32')
    })

    it('uses the given source name in messages when parsing a file', () => {
      expect(() => parseKeyring(`k1:${SHORT_KEY}`, '/data/secret.key')).toThrow(
        /^\/data\/secret\.key: entry 1/,
      )
    })

    it.each([
      ['an empty value', '', /HANGAR_SECRET_KEYS is empty/],
      ['a blank value', '   ', /HANGAR_SECRET_KEYS is empty/],
      ['an empty entry', `k1:${KEY_A},,k2:${KEY_B}`, /entry 2: is empty/],
      ['a key without an id', KEY_A, /entry 1: expected <key id>:<base64 key>/],
      ['a bad kid', `bad kid!:${KEY_A}`, /entry 1: key id must be/],
      ['a kid over 32 characters', `${'k'.repeat(33)}:${KEY_A}`, /entry 1: key id must be/],
      ['a duplicate kid', `k1:${KEY_A},k1:${KEY_B}`, /entry 2 \("k1"\): duplicate key id/],
      ['an empty key', 'k1:', /entry 1 \("k1"\): key is empty/],
      [
        'a key that is not base64',
        `k1:${KEY_A.slice(0, 40)}!!!!`,
        /entry 1 \("k1"\): key is not valid base64/,
      ],
    ])('rejects %s without echoing key material', (_label, value, pattern) => {
      const error = parseError(value)
      expect(error.code).toBe('config_invalid')
      expect(error.message).toMatch(pattern)
      const visible = `${error.message} ${error.hint} ${JSON.stringify(error.details)}`
      for (const key of [KEY_A, KEY_B, KEY_A.slice(0, 40)]) expect(visible).not.toContain(key)
    })

    it('never echoes a short key in its message', () => {
      const error = parseError(`k1:${SHORT_KEY}`)
      expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain(SHORT_KEY)
    })
  })

  describe('generateKeyEntry', () => {
    it('generates a dated kid and a 32-byte key that parseKeyring accepts', () => {
      const entry = generateKeyEntry()
      expect(entry).toMatch(/^k\d{8}-[0-9a-f]{4}:[A-Za-z0-9+/]{43}=$/)
      expect(parseKeyring(entry).keys.size).toBe(1)
    })

    it('uses the given kid when one is passed', () => {
      expect(parseKeyring(generateKeyEntry('rotated-2')).activeKeyId).toBe('rotated-2')
    })

    it('generates a different key each time', () => {
      expect(generateKeyEntry('a')).not.toBe(generateKeyEntry('a'))
    })
  })

  describe('loadKeyring', () => {
    let dataDir: string

    beforeEach(async () => {
      dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'hangar-'))
    })

    afterEach(async () => {
      await fs.rm(dataDir, { recursive: true, force: true })
    })

    it('generates a private key file on sqlite and reuses it on the second call', async () => {
      const first = await loadKeyring({ envValue: undefined, dataDir, engine: 'sqlite' })
      const file = path.join(dataDir, 'secret.key')
      expect(first).toMatchObject({ origin: 'file', file })
      if (!onWindows) expect((await fs.stat(file)).mode & 0o777).toBe(0o600)

      const second = await loadKeyring({ envValue: undefined, dataDir, engine: 'sqlite' })
      expect(loadedKeyring(second)).toEqual(loadedKeyring(first))
      // No temp files are left behind.
      expect(await fs.readdir(dataDir)).toEqual(['secret.key'])
    })

    it('creates the data dir when it does not exist yet', async () => {
      const nested = path.join(dataDir, 'nested', 'data')
      const source = await loadKeyring({ envValue: undefined, dataDir: nested, engine: 'sqlite' })
      expect(loadedKeyring(source).keys.size).toBe(1)
    })

    it.skipIf(onWindows)('tightens a 0644 key file to 0600 and keeps its keys', async () => {
      const file = path.join(dataDir, 'secret.key')
      await fs.writeFile(file, `old:${KEY_B}\nnew:${KEY_A}\n`, { mode: 0o644 })
      await fs.chmod(file, 0o644)

      const keyring = loadedKeyring(await loadKeyring({ envValue: undefined, dataDir, engine: 'sqlite' }))
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600)
      expect(keyring.activeKeyId).toBe('old')
      expect([...keyring.keys.keys()]).toEqual(['old', 'new'])
    })

    it('agrees on one key when several loads race on an empty data dir', async () => {
      const sources = await Promise.all(
        Array.from({ length: 8 }, () => loadKeyring({ envValue: undefined, dataDir, engine: 'sqlite' })),
      )
      const keyrings = sources.map(loadedKeyring)
      for (const keyring of keyrings) expect(keyring).toEqual(keyrings[0])
      const onDisk = parseKeyring((await fs.readFile(path.join(dataDir, 'secret.key'), 'utf8')).trim())
      expect(onDisk).toEqual(keyrings[0])
      expect(await fs.readdir(dataDir)).toEqual(['secret.key'])
    })

    it('names the file when its content is invalid', async () => {
      const file = path.join(dataDir, 'secret.key')
      await fs.writeFile(file, `k1:${SHORT_KEY}\n`, { mode: 0o600 })
      const attempt = loadKeyring({ envValue: undefined, dataDir, engine: 'sqlite' })
      await expect(attempt).rejects.toMatchObject({ code: 'config_invalid' })
      await expect(attempt).rejects.toThrow(`${file}: entry 1 ("k1"): key must be 32 bytes`)
    })

    it('returns no keyring with a reason on postgres without the env var', async () => {
      const source = await loadKeyring({ envValue: undefined, dataDir, engine: 'postgres' })
      expect(source).toEqual({
        keyring: null,
        reason:
          'HANGAR_SECRET_KEYS is not set: several daemons share a PostgreSQL store, so the key must come from the environment',
      })
      expect(await fs.readdir(dataDir)).toEqual([])
    })

    it('uses the env var on postgres when it is set', async () => {
      const source = await loadKeyring({ envValue: `pg:${KEY_A}`, dataDir, engine: 'postgres' })
      expect(source).toMatchObject({ origin: 'env' })
      expect(loadedKeyring(source).activeKeyId).toBe('pg')
    })

    it('prefers the env var over an existing key file', async () => {
      await fs.writeFile(path.join(dataDir, 'secret.key'), `file:${KEY_B}\n`, { mode: 0o600 })
      const source = await loadKeyring({ envValue: `env:${KEY_A}`, dataDir, engine: 'sqlite' })
      expect(source).toMatchObject({ origin: 'env' })
      expect(source).not.toHaveProperty('file')
      expect(loadedKeyring(source).activeKeyId).toBe('env')
    })

    it('does not create a key file when the env var is set', async () => {
      await loadKeyring({ envValue: `env:${KEY_A}`, dataDir, engine: 'sqlite' })
      expect(await fs.readdir(dataDir)).toEqual([])
    })

    it('throws when the env var is set but invalid instead of falling back to the file', async () => {
      await expect(
        loadKeyring({ envValue: `env:${SHORT_KEY}`, dataDir, engine: 'sqlite' }),
      ).rejects.toMatchObject({ code: 'config_invalid' })
    })

    it('treats an empty env var as unset', async () => {
      const source = await loadKeyring({ envValue: '', dataDir, engine: 'sqlite' })
      expect(source).toMatchObject({ origin: 'file' })
    })
  })
})
