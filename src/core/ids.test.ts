import { describe, expect, it } from 'vitest'
import { newId, ulid } from './ids.js'

describe('ids', () => {
  it('mints prefixed ULIDs that sort in creation order, even within one millisecond', () => {
    const ids = Array.from({ length: 500 }, () => newId('run'))
    expect(ids.every((id) => /^run_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true)
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('encodes the creation time in the first ten characters', () => {
    const before = Date.now()
    const id = ulid()
    const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
    const time = [...id.slice(0, 10)].reduce(
      (value, character) => value * 32 + alphabet.indexOf(character),
      0,
    )
    expect(time).toBeGreaterThanOrEqual(before - 5)
    expect(time).toBeLessThanOrEqual(Date.now() + 5)
  })
})
