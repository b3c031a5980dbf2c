import { describe, expect, it } from 'vitest'
import { createRedactor, REDACTED } from '../core/redact.js'
import {
  hashSecret,
  looksLikeToken,
  mintToken,
  parseToken,
  type SecretTokenKind,
  secretMatches,
  TOKEN_PATTERN,
  TOKEN_PREFIXES,
} from './secret-token.js'

const KINDS: SecretTokenKind[] = ['pat', 'session', 'login']

/** Replaces the character at `index` with a different character of the same alphabet. */
function changeCharacter(token: string, index: number): string {
  const replacement = token[index] === 'a' ? 'b' : 'a'
  return token.slice(0, index) + replacement + token.slice(index + 1)
}

describe('secret-token', () => {
  // Issue 17 item 1: the one redactor knows our tokens by shape alone (tokens minted by another process
  // were never registered with it): every kind, as minted, in any surrounding.
  it('has every minted token kind cut out by the redactor', () => {
    const redactor = createRedactor()
    for (const kind of KINDS) {
      for (let index = 0; index < 200; index++) {
        const { token } = mintToken(kind)
        expect(redactor.text(`a ${token}.`)).toBe(`a ${REDACTED}.`)
        expect(redactor.text(`{"token":"${token}"}`)).not.toContain(token.slice(17))
        expect(redactor.text(`PREFIX_${token}suffix`)).not.toContain(token.slice(17))
      }
    }
  })

  it('uses one prefix per kind', () => {
    expect(TOKEN_PREFIXES).toEqual({ pat: 'hgr_', session: 'hgs_', login: 'hgl_' })
  })

  it.each(KINDS)('parses back what it minted when the kind is %s', (kind) => {
    const minted = mintToken(kind)
    expect(minted.token).toMatch(/^hg[rsl]_[a-z2-7]{12}_[0-9A-Za-z]{38}$/)
    expect(minted.token.startsWith(TOKEN_PREFIXES[kind])).toBe(true)
    expect(minted.token).toHaveLength(55)

    const parsed = parseToken(minted.token, kind)
    expect(parsed).not.toBeNull()
    expect(parsed).toEqual({ kind, lookupId: minted.lookupId, secret: parsed?.secret })
    expect(parseToken(minted.token)?.kind).toBe(kind)
    expect(hashSecret(parsed?.secret ?? '')).toBe(minted.secretHash)
    expect(secretMatches(parsed?.secret ?? '', minted.secretHash)).toBe(true)
  })

  it('mints different tokens each time', () => {
    const tokens = new Set(Array.from({ length: 50 }, () => mintToken('pat').token))
    expect(tokens.size).toBe(50)
  })

  it('draws lookup id and secret from the injected randomBytes', () => {
    const fixed = (size: number) => Buffer.alloc(size, 1)
    const first = mintToken('pat', fixed)
    expect(first.lookupId).toBe('b'.repeat(12))
    expect(first.token).toBe(mintToken('pat', fixed).token)
  })

  it('skips random bytes that would bias the alphabet', () => {
    // 250 is above the largest multiple of 62 (248), so it must be dropped rather than mapped to a character.
    let call = 0
    const minted = mintToken('pat', (size) => Buffer.alloc(size, call++ === 1 ? 250 : 3))
    expect(minted.token.slice(17, 49)).toBe('3'.repeat(32))
  })

  // parseToken is a pure function: these rejections happen with no store at all, so a typo never costs a lookup.
  it('rejects a token with one changed character in the secret by its checksum', () => {
    const { token } = mintToken('pat')
    for (let index = 17; index < 49; index++) {
      const typo = changeCharacter(token, index)
      expect(looksLikeToken(typo)).toBe(true)
      expect(parseToken(typo)).toBeNull()
    }
  })

  it('rejects a token with one changed character in the lookup id or checksum', () => {
    const { token } = mintToken('session')
    expect(parseToken(changeCharacter(token, 4))).toBeNull()
    expect(parseToken(changeCharacter(token, 54))).toBeNull()
  })

  it('rejects a token whose kind does not match the expected one', () => {
    const session = mintToken('session').token
    expect(parseToken(session, 'pat')).toBeNull()
    expect(parseToken(session, 'login')).toBeNull()
    expect(parseToken(session, 'session')).not.toBeNull()
  })

  it('rejects a token with a foreign or swapped prefix', () => {
    const { token } = mintToken('pat')
    expect(parseToken(`ghp_${token.slice(4)}`)).toBeNull()
    // The prefix is covered by the checksum, so relabelling a PAT as a session fails too.
    expect(parseToken(`hgs_${token.slice(4)}`)).toBeNull()
  })

  it.each([
    ['an empty string', ''],
    ['a truncated token', mintToken('pat').token.slice(0, 54)],
    ['a token with a trailing character', `${mintToken('pat').token}x`],
    ['surrounding whitespace', ` ${mintToken('pat').token}`],
    [
      'an upper-case lookup id',
      mintToken('pat').token.replace(/^hgr_[a-z2-7]{12}/, (head) => head.toUpperCase()),
    ],
    ['a Bearer header', `Bearer ${mintToken('pat').token}`],
  ])('returns null for %s', (_label, value) => {
    expect(parseToken(value)).toBeNull()
  })

  it('matches the stored hash only for the right secret', () => {
    const { token, secretHash } = mintToken('pat')
    const secret = parseToken(token)?.secret ?? ''
    expect(secretMatches(secret, secretHash)).toBe(true)
    expect(secretMatches(changeCharacter(secret, 0), secretHash)).toBe(false)
    expect(secretMatches(secret, hashSecret('other'))).toBe(false)
    expect(secretMatches(secret, 'not-a-hash')).toBe(false)
    expect(secretMatches(secret, '')).toBe(false)
  })

  it('stores a SHA-256 hex hash that is neither the secret nor contains it', () => {
    const { token, secretHash } = mintToken('pat')
    const secret = parseToken(token)?.secret ?? ''
    expect(secretHash).toMatch(/^[0-9a-f]{64}$/)
    expect(secretHash).not.toContain(secret)
    expect(token).not.toContain(secretHash)
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('recognises the token shape for log redaction', () => {
    expect(looksLikeToken(mintToken('login').token)).toBe(true)
    expect(looksLikeToken('hgr_short')).toBe(false)
    expect(looksLikeToken(`see ${mintToken('pat').token}`)).toBe(false)
  })

  it('finds every token inside free text with TOKEN_PATTERN', () => {
    const pat = mintToken('pat').token
    const session = mintToken('session').token
    const text = `Authorization: Bearer ${pat}\ncookie=hangar_session=${session}; path=/ and hgr_notatoken`
    expect([...text.matchAll(TOKEN_PATTERN)].map((match) => match[0])).toEqual([pat, session])
    const redacted = text.replace(TOKEN_PATTERN, '[redacted]')
    expect(redacted).toBe(
      'Authorization: Bearer [redacted]\ncookie=hangar_session=[redacted]; path=/ and hgr_notatoken',
    )
    expect(TOKEN_PATTERN.flags).toContain('g')
  })
})
