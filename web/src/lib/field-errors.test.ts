// Issue 18 item 5: the profile form showed the daemon's refusal only as a toast. The daemon names each bad
// key in details.fields; the form puts each message next to its input, under these keys.
import { describe, expect, it } from 'vitest'
import { fieldErrorsByKey, formKeyOf, unplacedErrors } from './field-errors'

describe('profile form field errors', () => {
  it('maps the key paths of POST (definition.…) and PUT (the definition itself) to the same form keys', () => {
    expect(formKeyOf('definition.feeds[0].source')).toBe('feeds[0].source')
    expect(formKeyOf('feeds[1].name')).toBe('feeds[1].name')
    expect(formKeyOf('definition.feeds.2.ttl')).toBe('feeds[2].ttl')
    expect(formKeyOf('definition.target')).toBe('target')
    expect(formKeyOf('name')).toBe('name')
  })

  it('collects messages by key and keeps those no input shows', () => {
    const byKey = fieldErrorsByKey([
      { path: 'definition.target', message: 'unknown target "mars"' },
      { path: 'definition.feeds[0].source', message: 'unknown source "x"' },
      { path: 'definition.feeds[0].source', message: 'again' },
      { path: 'definition.isolateHome', message: 'expected boolean' },
    ])
    expect(byKey).toEqual({
      target: 'unknown target "mars"',
      'feeds[0].source': 'unknown source "x"; again',
      isolateHome: 'expected boolean',
    })
    expect(unplacedErrors(byKey, new Set(['target', 'feeds[0].source']))).toEqual([
      'isolateHome: expected boolean',
    ])
  })
})
