import { describe, expect, it } from 'vitest'
import { splitFrontmatter } from './feed-frontmatter.js'

describe('feed-frontmatter', () => {
  it('strips the block and one newline after it', () => {
    expect(splitFrontmatter('---\nttl: 60\n---\nhello\nworld\n')).toEqual({
      body: 'hello\nworld\n',
      ttlSeconds: 60,
    })
    expect(splitFrontmatter('---\r\nsource: x\r\nttl: 60\r\n---\r\nhello')).toEqual({
      body: 'hello',
      ttlSeconds: 60,
    })
    expect(splitFrontmatter('---\nttl: 60\n---')).toEqual({ body: '', ttlSeconds: 60 })
  })

  it.each([
    ['60', 60],
    ['60s', 60],
    ['5m', 300],
    ['1h', 3600],
    ['1.5m', 90],
    ['0.5', 0.5],
    ['"5m"', 300],
    ['30 # half a minute', 30],
  ])('reads ttl %s as %d seconds', (value, seconds) => {
    expect(splitFrontmatter(`---\nttl: ${value}\n---\nbody`)).toEqual({ body: 'body', ttlSeconds: seconds })
  })

  it.each(['0', '-5', 'soon', '5d', '5 minutes', '', '1e3', '60ss'])(
    'ignores the malformed ttl "%s" but still strips the block',
    (value) => {
      const result = splitFrontmatter(`---\nttl: ${value}\n---\nbody`)
      expect(result).toEqual({ body: 'body' })
      expect('ttlSeconds' in result).toBe(false)
    },
  )

  it('strips a block without a ttl and leaves the declared ttl in force', () => {
    expect(splitFrontmatter('---\ntitle: x\n---\nbody')).toEqual({ body: 'body' })
  })

  it('leaves text without an opening or closing line unchanged', () => {
    for (const text of [
      'plain text',
      '---\nttl: 60\nno closing line',
      ' ---\nttl: 60\n---\nx',
      '--- \nttl: 1',
    ]) {
      expect(splitFrontmatter(text)).toEqual({ body: text })
    }
    expect(splitFrontmatter('')).toEqual({ body: '' })
  })

  it('reads only the frontmatter, not a ttl line in the body', () => {
    expect(splitFrontmatter('---\na: 1\n---\nttl: 60\n')).toEqual({ body: 'ttl: 60\n' })
  })

  // Issue 18 item 7: a source that says when its data was refreshed is believed over our fetch time.
  it.each([
    ['2026-11-25T17:00:00Z', '2026-11-25T17:00:00.000Z'],
    ['"2026-11-25T17:00:00.250Z"', '2026-11-25T17:00:00.250Z'],
    ['2026-11-25T18:30:00+01:30', '2026-11-25T17:00:00.000Z'],
    ['2026-11-25 17:00:00Z # from the ledger', '2026-11-25T17:00:00.000Z'],
  ])('reads refreshed %s as the time of the value', (value, iso) => {
    const result = splitFrontmatter(`---\nttl: 60\nrefreshed: ${value}\n---\nbody`)
    expect(result).toEqual({ body: 'body', ttlSeconds: 60, refreshedAt: new Date(iso) })
  })

  it.each(['yesterday', '2026-11-25T17:00:00', '2026-13-45T99:00:00Z', '1764090000', ''])(
    'ignores the malformed refreshed "%s" but still strips the block',
    (value) => {
      const result = splitFrontmatter(`---\nrefreshed: ${value}\n---\nbody`)
      expect(result).toEqual({ body: 'body' })
    },
  )
})
