import { createCipheriv, createDecipheriv, randomBytes as cryptoRandomBytes } from 'node:crypto'
import { AppError } from '../core/errors.js'
import { KEY_ID_PATTERN, type Keyring } from './keyring.js'

/**
 * The key vault: encrypts provider keys (and other user secrets) at rest with AES-256-GCM.
 *
 * Envelope format (one ASCII string, safe in a TEXT column):
 *
 *   hv1.<kid>.<iv>.<ciphertext>.<tag>
 *
 *   hv1         format version
 *   kid         id of the keyring key that encrypted it, so old envelopes stay readable after rotation
 *   iv          12 random bytes, fresh for every encryption (base64url, no padding)
 *   ciphertext  AES-256-GCM ciphertext of the UTF-8 plaintext (base64url, no padding; empty for '')
 *   tag         16-byte GCM authentication tag (base64url, no padding)
 *
 * The additional authenticated data is `${purpose}|${userId}|${kid}` in UTF-8. It is not stored: it binds
 * the envelope to its owner and use, so an envelope copied to another user's row, used for another
 * purpose, or relabelled with another key id fails authentication instead of decrypting.
 */
export interface SecretBinding {
  /** What the secret is for, e.g. 'provider-key'. A fixed string chosen by the code, never user input. */
  purpose: string
  userId: string
}

export interface Vault {
  readonly activeKeyId: string
  encrypt(plaintext: string, binding: SecretBinding): string
  decrypt(envelope: string, binding: SecretBinding): string
  /** The key id an envelope was encrypted with; throws `secret_unreadable` when it is malformed. */
  keyIdOf(envelope: string): string
  /** True when the envelope is not under the active key, i.e. `rewrap` would change it. */
  needsRewrap(envelope: string): boolean
  /** Decrypts with the envelope's own key and encrypts with the active one; unchanged when already active. */
  rewrap(envelope: string, binding: SecretBinding): string
}

export interface VaultOptions {
  /** Injected for tests; defaults to node:crypto randomBytes. */
  randomBytes?: (size: number) => Buffer
}

const VERSION = 'hv1'
const ALGORITHM = 'aes-256-gcm'
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
const BASE64URL = /^[A-Za-z0-9_-]*$/

interface ParsedEnvelope {
  keyId: string
  iv: Buffer
  ciphertext: Buffer
  tag: Buffer
}

export function createVault(keyring: Keyring, options: VaultOptions = {}): Vault {
  const randomBytes = options.randomBytes ?? cryptoRandomBytes
  // A private copy: a caller mutating its map later must not change what the vault can read.
  const keys = new Map(keyring.keys)
  const activeKeyId = keyring.activeKeyId
  if (!keys.has(activeKeyId)) {
    throw new AppError('internal', `vault: active key id "${activeKeyId}" is not in the keyring`)
  }
  for (const [keyId, key] of keys) {
    if (key.length !== KEY_BYTES) {
      throw new AppError('internal', `vault: key "${keyId}" must be ${KEY_BYTES} bytes`)
    }
  }

  const encrypt = (plaintext: string, binding: SecretBinding): string => {
    const key = keys.get(activeKeyId)!
    const iv = randomBytes(IV_BYTES)
    if (iv.length !== IV_BYTES)
      throw new AppError('internal', `vault: randomBytes returned ${iv.length} bytes`)
    const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(additionalData(binding, activeKeyId))
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    const tag = cipher.getAuthTag()
    return [VERSION, activeKeyId, encode(iv), encode(ciphertext), encode(tag)].join('.')
  }

  const decrypt = (envelope: string, binding: SecretBinding): string => {
    const parsed = parseEnvelope(envelope)
    const key = keys.get(parsed.keyId)
    if (key === undefined) {
      throw new AppError(
        'secret_unreadable',
        `secret was encrypted with key id "${parsed.keyId}", which is not in the keyring`,
        {
          hint: 'add the old key to HANGAR_SECRET_KEYS after the active one, then run the rewrap command',
          details: { keyId: parsed.keyId },
        },
      )
    }
    // Bad bindings are programmer errors; check them before GCM turns them into "tampered".
    const aad = additionalData(binding, parsed.keyId)
    try {
      const decipher = createDecipheriv(ALGORITHM, key, parsed.iv, { authTagLength: TAG_BYTES })
      decipher.setAAD(aad)
      decipher.setAuthTag(parsed.tag)
      return Buffer.concat([decipher.update(parsed.ciphertext), decipher.final()]).toString('utf8')
    } catch (error) {
      throw new AppError(
        'secret_unreadable',
        'secret authentication failed: tampered, or bound to another user or purpose',
        { details: { keyId: parsed.keyId }, cause: error },
      )
    }
  }

  const keyIdOf = (envelope: string): string => parseEnvelope(envelope).keyId

  return {
    activeKeyId,
    encrypt,
    decrypt,
    keyIdOf,
    needsRewrap: (envelope) => keyIdOf(envelope) !== activeKeyId,
    rewrap(envelope, binding) {
      // Decrypt first even when already active, so a rewrap pass also verifies every envelope.
      const plaintext = decrypt(envelope, binding)
      return keyIdOf(envelope) === activeKeyId ? envelope : encrypt(plaintext, binding)
    },
  }
}

function additionalData(binding: SecretBinding, keyId: string): Buffer {
  // The key id cannot hold '|'; keeping it out of the purpose too makes the AAD split unambiguous.
  if (binding.purpose === '' || binding.purpose.includes('|')) {
    throw new AppError('internal', 'vault: a binding purpose must be non-empty and must not contain "|"')
  }
  if (binding.userId === '') throw new AppError('internal', 'vault: a binding needs a user id')
  return Buffer.from(`${binding.purpose}|${binding.userId}|${keyId}`, 'utf8')
}

function parseEnvelope(envelope: string): ParsedEnvelope {
  const parts = envelope.split('.')
  const [version, keyId, iv, ciphertext, tag] = parts
  if (
    parts.length !== 5 ||
    version !== VERSION ||
    keyId === undefined ||
    !KEY_ID_PATTERN.test(keyId) ||
    iv === undefined ||
    ciphertext === undefined ||
    tag === undefined
  ) {
    throw malformed()
  }
  const parsed = { keyId, iv: decode(iv), ciphertext: decode(ciphertext), tag: decode(tag) }
  if (parsed.iv.length !== IV_BYTES || parsed.tag.length !== TAG_BYTES) throw malformed()
  return parsed
}

function encode(bytes: Buffer): string {
  return bytes.toString('base64url')
}

/** Strict base64url: only the canonical encoding is accepted, so every changed character changes a byte. */
function decode(text: string): Buffer {
  if (!BASE64URL.test(text)) throw malformed()
  const bytes = Buffer.from(text, 'base64url')
  if (encode(bytes) !== text) throw malformed()
  return bytes
}

function malformed(): AppError {
  return new AppError('secret_unreadable', 'secret is malformed: not a hv1 vault envelope')
}
