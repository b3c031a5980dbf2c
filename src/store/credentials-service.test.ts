import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { dumpStore } from '../../test/helpers/store-dump.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { createCredentialsService } from './credentials-service.js'
import { generateKeyEntry, parseKeyring } from './keyring.js'
import type { User } from './repositories/users-repository.js'
import { openStore } from './store.js'
import { createVault } from './vault.js'

const API_KEY = 'sk-ant-api03-THIS-IS-A-VERY-SECRET-KEY-9876'

describe.each(STORE_ENGINES)('credentials-service ($name)', (engine) => {
  let testStore: TestStore
  let alice: User
  let bob: User
  const oldEntry = generateKeyEntry('old')
  const newEntry = generateKeyEntry('new')

  beforeEach(async () => {
    testStore = await engine.open()
    alice = await testStore.store.users.create({ name: 'alice', role: 'owner' })
    bob = await testStore.store.users.create({ name: 'bob', role: 'member' })
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  const serviceWith = (keys: string) =>
    createCredentialsService({
      store: testStore.store,
      vaultState: { vault: createVault(parseKeyring(keys)) },
    })

  it('stores a key write-only: views show only that it is configured and its last 4 characters', async () => {
    const credentials = serviceWith(oldEntry)
    const view = await credentials.put('system', alice.id, 'anthropic', {
      apiKey: API_KEY,
      model: 'claude-sonnet-4-6',
    })
    expect(view).toMatchObject({ provider: 'anthropic', keyConfigured: true, keyLast4: '9876' })
    expect(JSON.stringify(view)).not.toContain(API_KEY.slice(0, 20))
    expect(await credentials.revealKey(alice.id, 'anthropic')).toBe(API_KEY)
    expect(await credentials.revealKey(bob.id, 'anthropic')).toBeNull()
    const audit = await testStore.store.forUser(alice.id).audit.list()
    expect(audit[0]).toMatchObject({ action: 'credential.update', targetId: 'anthropic' })
    expect(JSON.stringify(audit)).not.toContain(API_KEY)
  })

  // Issue 17 item 1: a vaulted key copied into a workspace file reached tools and events in plaintext;
  // every key the vault stores or opens is registered with the store's one redactor.
  it('registers every key it stores, decrypts, or finds vaulted at start-up with the redactor', async () => {
    const stored = 'vaulted-key-stored-here-0001'
    await serviceWith(oldEntry).put('system', alice.id, 'openai', { apiKey: stored })
    expect(testStore.store.redactor.text(stored)).toBe('[redacted]')

    // Another process on the same database (its own store and redactor) learns it at start-up or on decrypt.
    const sameDatabase = await openStore({
      dataDir: testStore.dataDir,
      ...(testStore.databaseUrl && { url: testStore.databaseUrl }),
    })
    try {
      const credentials = createCredentialsService({
        store: sameDatabase,
        vaultState: { vault: createVault(parseKeyring(oldEntry)) },
      })
      expect(sameDatabase.redactor.text(stored)).toBe(stored)
      expect(await credentials.registerVaultedKeys()).toBe(1)
      expect(sameDatabase.redactor.text(`k=${stored}`)).toBe('k=[redacted]')
    } finally {
      await sameDatabase.close()
    }
    const reader = await openStore({
      dataDir: testStore.dataDir,
      ...(testStore.databaseUrl && { url: testStore.databaseUrl }),
    })
    try {
      const credentials = createCredentialsService({
        store: reader,
        vaultState: { vault: createVault(parseKeyring(oldEntry)) },
      })
      expect(await credentials.revealKey(alice.id, 'openai')).toBe(stored)
      expect(reader.redactor.text(stored)).toBe('[redacted]')
    } finally {
      await reader.close()
    }
  })

  it('keeps no plaintext key in the database', async () => {
    await serviceWith(oldEntry).put('system', alice.id, 'openai', { apiKey: API_KEY })
    await testStore.store.close()
    const dump = await dumpStore(testStore.databaseUrl, testStore.dataDir)
    testStore = await engine.open()
    expect(dump).toContain('openai')
    expect(dump).not.toContain(API_KEY)
    expect(dump).not.toContain(API_KEY.slice(4, 24))
    expect(dump).not.toContain(Buffer.from(API_KEY).toString('base64').slice(0, 24))
  })

  it('fails on another user’s envelope copied into a row (AAD binds the user)', async () => {
    const credentials = serviceWith(oldEntry)
    await credentials.put('system', alice.id, 'openai', { apiKey: API_KEY })
    const stolen = (await testStore.store.forUser(alice.id).credentials.get('openai'))!.keyEnvelope
    await testStore.store.forUser(bob.id).credentials.upsert('openai', { keyEnvelope: stolen })
    await expect(credentials.revealKey(bob.id, 'openai')).rejects.toMatchObject({ code: 'secret_unreadable' })
  })

  it('rewraps every envelope under a rotated key and keeps them readable', async () => {
    await serviceWith(oldEntry).put('system', alice.id, 'openai', { apiKey: API_KEY })
    await serviceWith(oldEntry).put('system', bob.id, 'anthropic', { apiKey: `${API_KEY}-bob` })
    const rotated = serviceWith(`${newEntry},${oldEntry}`)
    expect(await rotated.rewrapAll()).toEqual({ rewrapped: 2, current: 0, failed: [] })
    expect(await rotated.rewrapAll()).toEqual({ rewrapped: 0, current: 2, failed: [] })
    const newOnly = serviceWith(newEntry)
    expect(await newOnly.revealKey(alice.id, 'openai')).toBe(API_KEY)
    expect(await newOnly.revealKey(bob.id, 'anthropic')).toBe(`${API_KEY}-bob`)
    await expect(serviceWith(oldEntry).revealKey(alice.id, 'openai')).rejects.toMatchObject({
      code: 'secret_unreadable',
    })
  })

  it('answers vault_unavailable for key operations when no instance key exists, but keeps keyless providers', async () => {
    const credentials = createCredentialsService({
      store: testStore.store,
      vaultState: { vault: null, reason: 'HANGAR_SECRET_KEYS is not set' },
    })
    await expect(credentials.put('system', alice.id, 'openai', { apiKey: API_KEY })).rejects.toMatchObject({
      code: 'vault_unavailable',
    })
    const ollama = await credentials.put('system', alice.id, 'ollama', {
      baseUrl: 'http://127.0.0.1:11434/v1',
    })
    expect(ollama).toMatchObject({ keyConfigured: false, baseUrl: 'http://127.0.0.1:11434/v1' })
    expect(await credentials.list(alice.id)).toHaveLength(1)
  })
})
