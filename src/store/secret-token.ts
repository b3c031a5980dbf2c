import { createHash, hash, randomBytes as cryptoRandomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'

/**
 * Bearer secrets: personal access tokens, sessions and one-time login links.
 *
 * Format (55 ASCII characters):
 *
 *   <prefix><lookup id>_<secret><checksum>
 *
 *   prefix     'hgr_' personal access (and proxy) tokens, 'hgs_' sessions, 'hgl_' login / invite links;
 *              it tells a reader (and secret scanners) what leaked
 *   lookup id  12 random characters of lower-case base32 (a-z, 2-7): the row to look up, not secret
 *   secret     32 random base62 characters (about 190 bits); only its SHA-256 is stored
 *   checksum   CRC32 of `prefix + lookupId + '_' + secret`, as 6 base62 characters (zero-padded)
 *
 * The checksum lets `parseToken` reject a typo or truncated paste without touching the database. It is
 * not a MAC: an attacker can compute it, so the stored hash is what authenticates.
 */
export type SecretTokenKind = 'pat' | 'session' | 'login'

export const TOKEN_PREFIXES: Record<SecretTokenKind, string> = { pat: 'hgr_', session: 'hgs_', login: 'hgl_' }

export interface MintedToken {
  kind: SecretTokenKind
  lookupId: string
  /** Shown to the user once; never stored. */
  token: string
  /** What the database keeps, together with lookupId. */
  secretHash: string
}

export interface ParsedToken {
  kind: SecretTokenKind
  lookupId: string
  secret: string
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const LOOKUP_ID_LENGTH = 12
const SECRET_LENGTH = 32
const CHECKSUM_LENGTH = 6
const SHA256_HEX = /^[0-9a-f]{64}$/

const KINDS = Object.keys(TOKEN_PREFIXES) as SecretTokenKind[]
const PREFIX_ALTERNATIVES = KINDS.map((kind) => TOKEN_PREFIXES[kind]).join('|')
const SHAPE = `(${PREFIX_ALTERNATIVES})([a-z2-7]{${LOOKUP_ID_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})`
const EXACT_SHAPE = new RegExp(`^${SHAPE}$`)

/**
 * Any of our tokens inside free text, for redaction: `text.replace(TOKEN_PATTERN, '[redacted]')`. It
 * matches the shape only (not the checksum), so a mistyped token is redacted too. It is global, so use it
 * with replace/matchAll; `.test` on a global regex keeps state between calls (use `looksLikeToken`).
 */
export const TOKEN_PATTERN = new RegExp(SHAPE, 'g')

export function mintToken(
  kind: SecretTokenKind,
  randomBytes: (size: number) => Buffer = cryptoRandomBytes,
): MintedToken {
  const prefix = TOKEN_PREFIXES[kind]
  const lookupId = randomString(BASE32, LOOKUP_ID_LENGTH, randomBytes)
  const secret = randomString(BASE62, SECRET_LENGTH, randomBytes)
  const token = `${prefix}${lookupId}_${secret}${checksum(prefix, lookupId, secret)}`
  return { kind, lookupId, token, secretHash: hashSecret(secret) }
}

/**
 * Splits a presented token. Null when the prefix, shape or checksum is wrong, or when it is not of the
 * expected kind (a session token is no PAT). Pure: the caller looks up `lookupId` only after this passes.
 */
export function parseToken(token: string, kind?: SecretTokenKind): ParsedToken | null {
  const match = EXACT_SHAPE.exec(token)
  if (match === null) return null
  const [, prefix = '', lookupId = '', secret = '', presentedChecksum = ''] = match
  const tokenKind = KINDS.find((candidate) => TOKEN_PREFIXES[candidate] === prefix)
  if (tokenKind === undefined || (kind !== undefined && kind !== tokenKind)) return null
  if (checksum(prefix, lookupId, secret) !== presentedChecksum) return null
  return { kind: tokenKind, lookupId, secret }
}

/** SHA-256 hex of the secret. A plain hash suffices: the secret is random, so there is nothing to guess. */
export function hashSecret(secret: string): string {
  // One-shot: no Hash object per call (it runs on every proxied request).
  return hash('sha256', secret, 'hex')
}

/** Compares in constant time, so response timing does not reveal how much of a guess was right. */
export function secretMatches(secret: string, storedHash: string): boolean {
  if (!SHA256_HEX.test(storedHash)) return false
  const presented = createHash('sha256').update(secret, 'utf8').digest()
  return timingSafeEqual(presented, Buffer.from(storedHash, 'hex'))
}

/** True when the whole value has the shape of one of our tokens (checksum not checked), for log redaction. */
export function looksLikeToken(value: string): boolean {
  return EXACT_SHAPE.test(value)
}

function checksum(prefix: string, lookupId: string, secret: string): string {
  let value = crc32(`${prefix}${lookupId}_${secret}`)
  let encoded = ''
  for (let index = 0; index < CHECKSUM_LENGTH; index++) {
    encoded = BASE62[value % 62] + encoded
    value = Math.floor(value / 62)
  }
  return encoded
}

/**
 * Uniform random characters. Bytes at or above the largest multiple of the alphabet size are dropped, so
 * no character is more likely than another (a plain `byte % 62` would favour the first eight).
 */
function randomString(alphabet: string, length: number, randomBytes: (size: number) => Buffer): string {
  const limit = 256 - (256 % alphabet.length)
  let result = ''
  while (result.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= limit) continue
      result += alphabet[byte % alphabet.length]
      if (result.length === length) break
    }
  }
  return result
}
