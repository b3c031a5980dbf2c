import { describe, expect, it } from 'vitest'
import { createRedactor, REDACTED } from './redact.js'

describe('redact', () => {
  it('cuts Hangar tokens and provider key shapes out of free text', () => {
    const redactor = createRedactor()
    const token = `hgr_abcdefghijkl_${'A'.repeat(32)}abc123`
    const text = `token ${token} key sk-ant-api03-abcdefghijklmnopqrstuvwx and Bearer abcdefghijklmnopq`
    const redacted = redactor.text(text)
    expect(redacted).not.toContain(token)
    expect(redacted).not.toContain('sk-ant-api03')
    expect(redacted).toContain(`Bearer ${REDACTED}`)
  })

  it('replaces values under secret keys and registered exact secrets, deeply', () => {
    const redactor = createRedactor()
    redactor.add('my-custom-secret-value')
    const value = redactor.value({
      headers: { authorization: 'x', 'x-api-key': 'y', accept: 'json' },
      nested: [{ note: 'uses my-custom-secret-value here' }],
      apiKey: 'z',
    })
    expect(value).toEqual({
      headers: { authorization: REDACTED, 'x-api-key': REDACTED, accept: 'json' },
      nested: [{ note: `uses ${REDACTED} here` }],
      apiKey: REDACTED,
    })
  })

  // Issue 17 item 1: a token glued to other text, cut short or padded must not slip past the shape.
  it('cuts our tokens out wherever they sit, glued to words or cut short', () => {
    const redactor = createRedactor()
    const token = `hgs_abcdefghijkl_${'Ab1'.repeat(12)}Zz`
    for (const text of [`x${token}y`, `TOKEN_${token}_backup`, `"token":"${token}"`, token.slice(0, 40)]) {
      expect(redactor.text(text)).not.toMatch(/hg[rsl]_[a-z2-7]{12}_[0-9A-Za-z]{16}/)
    }
    expect(redactor.text(`a ${token} b`)).toBe(`a ${REDACTED} b`)
  })

  // Issue 17 item 1: registered values are matched literally (keys hold + / = and regex syntax), longest
  // first, and in their URL-encoded spelling too.
  it('cuts out registered values literally, longest first, also URL-encoded', () => {
    const redactor = createRedactor()
    const key = 'q+Wd/9x(Z)*?[k]=='
    redactor.add(key)
    redactor.add('prefix-secret')
    redactor.add('prefix-secret-and-more')
    expect(redactor.text(`key ${key} end`)).toBe(`key ${REDACTED} end`)
    expect(redactor.text(`?k=${encodeURIComponent(key)}&`)).toBe(`?k=${REDACTED}&`)
    expect(redactor.text('prefix-secret-and-more!')).toBe(`${REDACTED}!`)
    expect(redactor.text('nothing here')).toBe('nothing here')
  })

  it('registers values added after it was first used', () => {
    const redactor = createRedactor()
    expect(redactor.text('late-registered-value')).toBe('late-registered-value')
    redactor.add('late-registered-value')
    expect(redactor.text('late-registered-value')).toBe(REDACTED)
  })

  // Issue 17 item 1: deep tool output used to pass through unredacted past depth 8.
  it('redacts deeply nested values instead of passing them through', () => {
    const redactor = createRedactor()
    redactor.add('deep-secret-value')
    let nested: unknown = { note: 'deep-secret-value' }
    for (let depth = 0; depth < 60; depth++) nested = { next: nested }
    expect(JSON.stringify(redactor.value(nested))).not.toContain('deep-secret-value')
  })

  it('ignores registered values too short to be secrets', () => {
    const redactor = createRedactor()
    redactor.add('abc')
    expect(redactor.text('abc def')).toBe('abc def')
  })
})
