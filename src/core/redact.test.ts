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

  it('ignores registered values too short to be secrets', () => {
    const redactor = createRedactor()
    redactor.add('abc')
    expect(redactor.text('abc def')).toBe('abc def')
  })
})
