import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import type { Keyring } from './keyring.js'
import { createVault, type SecretBinding } from './vault.js'

const OLD_KEY = randomBytes(32)
const NEW_KEY = randomBytes(32)
const ALICE: SecretBinding = { purpose: 'provider-key', userId: 'usr_alice' }
const BOB: SecretBinding = { purpose: 'provider-key', userId: 'usr_bob' }
const SECRET = 'sk-ant-api03-very-secret-provider-key'

function keyring(...entries: Array<[string, Buffer]>): Keyring {
  return { activeKeyId: entries[0]![0], keys: new Map(entries) }
}

function unreadable(action: () => unknown): AppError {
  try {
    action()
  } catch (error) {
    if (error instanceof AppError && error.code === 'secret_unreadable') return error
    throw error
  }
  throw new Error('expected secret_unreadable')
}

/** Flips one bit in the given envelope part (2 = iv, 3 = ciphertext, 4 = tag) and re-encodes it. */
function tamper(envelope: string, part: number): string {
  const parts = envelope.split('.')
  const bytes = Buffer.from(parts[part]!, 'base64url')
  bytes[0] = bytes[0]! ^ 0x01
  parts[part] = bytes.toString('base64url')
  return parts.join('.')
}

describe('vault', () => {
  it('decrypts what it encrypted when the binding is the same', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    const envelope = vault.encrypt(SECRET, ALICE)
    expect(vault.decrypt(envelope, ALICE)).toBe(SECRET)
  })

  it('round-trips empty and non-ASCII plaintexts', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    for (const plaintext of ['', 'clé-🔑-ключ']) {
      expect(vault.decrypt(vault.encrypt(plaintext, ALICE), ALICE)).toBe(plaintext)
    }
  })

  it('writes a hv1 envelope with the key id, a 12-byte iv and a 16-byte tag', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    const [version, keyId, iv, ciphertext, tag, ...rest] = vault.encrypt(SECRET, ALICE).split('.')
    expect([version, keyId, rest]).toEqual(['hv1', 'k1', []])
    expect(Buffer.from(iv!, 'base64url').length).toBe(12)
    expect(Buffer.from(ciphertext!, 'base64url').length).toBe(Buffer.byteLength(SECRET))
    expect(Buffer.from(tag!, 'base64url').length).toBe(16)
  })

  it('uses a fresh iv for every encryption', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    expect(vault.encrypt(SECRET, ALICE)).not.toBe(vault.encrypt(SECRET, ALICE))
  })

  it('takes the iv from the injected randomBytes', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]), { randomBytes: (size) => Buffer.alloc(size, 7) })
    const envelope = vault.encrypt(SECRET, ALICE)
    expect(envelope.split('.')[2]).toBe(Buffer.alloc(12, 7).toString('base64url'))
    expect(vault.encrypt(SECRET, ALICE)).toBe(envelope)
  })

  it('never shows the plaintext in the envelope, raw or base64-encoded', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    const envelope = vault.encrypt(SECRET, ALICE)
    const plain = Buffer.from(SECRET)
    for (const form of [
      SECRET,
      plain.toString('base64'),
      plain.toString('base64url'),
      plain.toString('hex'),
    ]) {
      expect(envelope).not.toContain(form)
      // A base64 encoding of the plaintext at another byte offset would start differently; check those too.
      expect(envelope).not.toContain(form.slice(4, 24))
    }
  })

  it.each([
    ['iv', 2],
    ['ciphertext', 3],
    ['tag', 4],
  ])('fails with secret_unreadable when a byte of the %s is changed', (_part, index) => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    const error = unreadable(() => vault.decrypt(tamper(vault.encrypt(SECRET, ALICE), index), ALICE))
    expect(error.message).toMatch(/authentication failed/)
    expect(error.message).not.toContain(SECRET)
  })

  it('fails with secret_unreadable when any single character of the envelope is changed', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    const envelope = vault.encrypt(SECRET, ALICE)
    for (let index = 0; index < envelope.length; index++) {
      const replacement = envelope[index] === 'A' ? 'B' : 'A'
      const changed = envelope.slice(0, index) + replacement + envelope.slice(index + 1)
      unreadable(() => vault.decrypt(changed, ALICE))
    }
  })

  it("fails to decrypt another user's envelope", () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    const error = unreadable(() => vault.decrypt(vault.encrypt(SECRET, ALICE), BOB))
    expect(error.message).toBe('secret authentication failed: tampered, or bound to another user or purpose')
  })

  it('fails to decrypt an envelope bound to another purpose', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    const envelope = vault.encrypt(SECRET, ALICE)
    unreadable(() => vault.decrypt(envelope, { ...ALICE, purpose: 'feed-token' }))
  })

  it('fails when the key id is relabelled to another key of the keyring', () => {
    const vault = createVault(keyring(['new', NEW_KEY], ['old', NEW_KEY]))
    const relabelled = vault.encrypt(SECRET, ALICE).replace('hv1.new.', 'hv1.old.')
    unreadable(() => vault.decrypt(relabelled, ALICE))
  })

  it('names the missing key id and hints at the keyring when the key id is unknown', () => {
    const envelope = createVault(keyring(['old', OLD_KEY])).encrypt(SECRET, ALICE)
    const error = unreadable(() => createVault(keyring(['new', NEW_KEY])).decrypt(envelope, ALICE))
    expect(error.message).toBe('secret was encrypted with key id "old", which is not in the keyring')
    expect(error.hint).toMatch(/add the old key to HANGAR_SECRET_KEYS/)
  })

  it.each([
    ['an empty string', ''],
    ['a plain string', SECRET],
    ['another version', 'hv2.k1.AAAAAAAAAAAAAAAA..AAAAAAAAAAAAAAAAAAAAAA'],
    ['too few parts', 'hv1.k1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA'],
    ['a short iv', 'hv1.k1.AAAA..AAAAAAAAAAAAAAAAAAAAAA'],
    ['padding', 'hv1.k1.AAAAAAAAAAAAAAAA..AAAAAAAAAAAAAAAAAAAAAA=='],
    ['a bad key id', 'hv1.k 1.AAAAAAAAAAAAAAAA..AAAAAAAAAAAAAAAAAAAAAA'],
  ])('says the envelope is malformed when it is %s', (_label, envelope) => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    expect(unreadable(() => vault.decrypt(envelope, ALICE)).message).toMatch(/malformed/)
    expect(unreadable(() => vault.keyIdOf(envelope)).message).toMatch(/malformed/)
  })

  it('decrypts old envelopes and rewraps them under the active key after rotation', () => {
    const before = createVault(keyring(['old', OLD_KEY]))
    const oldEnvelope = before.encrypt(SECRET, ALICE)

    const after = createVault(keyring(['new', NEW_KEY], ['old', OLD_KEY]))
    expect(after.activeKeyId).toBe('new')
    expect(after.decrypt(oldEnvelope, ALICE)).toBe(SECRET)
    expect(after.keyIdOf(oldEnvelope)).toBe('old')
    expect(after.needsRewrap(oldEnvelope)).toBe(true)

    const rewrapped = after.rewrap(oldEnvelope, ALICE)
    expect(after.keyIdOf(rewrapped)).toBe('new')
    expect(after.needsRewrap(rewrapped)).toBe(false)
    expect(after.decrypt(rewrapped, ALICE)).toBe(SECRET)
    // Once the old key is dropped, the rewrapped envelope still decrypts.
    expect(createVault(keyring(['new', NEW_KEY])).decrypt(rewrapped, ALICE)).toBe(SECRET)
  })

  it('leaves an envelope already under the active key unchanged when rewrapping', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    const envelope = vault.encrypt(SECRET, ALICE)
    expect(vault.needsRewrap(envelope)).toBe(false)
    expect(vault.rewrap(envelope, ALICE)).toBe(envelope)
  })

  it('refuses to rewrap an envelope bound to another user', () => {
    const vault = createVault(keyring(['new', NEW_KEY], ['old', OLD_KEY]))
    const envelope = createVault(keyring(['old', OLD_KEY])).encrypt(SECRET, ALICE)
    unreadable(() => vault.rewrap(envelope, BOB))
  })

  it('rejects a binding whose purpose contains the AAD separator', () => {
    const vault = createVault(keyring(['k1', OLD_KEY]))
    expect(() => vault.encrypt(SECRET, { purpose: 'a|b', userId: 'usr_1' })).toThrow(/must not contain/)
  })

  it('rejects a keyring whose active key is missing or not 32 bytes', () => {
    expect(() => createVault({ activeKeyId: 'x', keys: new Map([['k1', OLD_KEY]]) })).toThrow(AppError)
    expect(() => createVault(keyring(['k1', randomBytes(16)]))).toThrow(/must be 32 bytes/)
  })

  it('keeps working when the caller mutates its keyring map afterwards', () => {
    const keys = new Map([['k1', OLD_KEY]])
    const vault = createVault({ activeKeyId: 'k1', keys })
    keys.clear()
    expect(vault.decrypt(vault.encrypt(SECRET, ALICE), ALICE)).toBe(SECRET)
  })
})
