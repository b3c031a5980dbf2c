import { describe, expect, it } from 'vitest'
import { filterMismatch, renderTemplate, valueAt } from './payload-template.js'
import { signBody, verifySignature } from './webhook-signature.js'

const labeled = {
  action: 'labeled',
  label: { name: 'agent' },
  issue: { number: 7, title: 'Fix the build', body: 'It fails', labels: [{ name: 'agent' }] },
}

describe('payload templates', () => {
  it('substitutes dotted paths and nothing else', () => {
    expect(renderTemplate('{{issue.title}}: {{ issue.body }} (#{{issue.number}})', labeled)).toBe(
      'Fix the build: It fails (#7)',
    )
    expect(renderTemplate('{{issue.labels.0.name}}|{{issue.missing}}|{{issue.labels}}', labeled)).toBe(
      'agent||[{"name":"agent"}]',
    )
    // No code: expressions and prototype members are not paths that resolve.
    expect(renderTemplate('{{issue.title.constructor}}{{__proto__}}{{ 1+1 }}', labeled)).toBe('{{ 1+1 }}')
    expect(valueAt(labeled, 'toString')).toBeUndefined()
  })

  it('filters on event, action and label', () => {
    const filter = { event: 'issues', action: 'labeled', label: 'agent' }
    expect(filterMismatch(filter, 'issues', labeled)).toBeNull()
    expect(filterMismatch(null, undefined, {})).toBeNull()
    expect(filterMismatch(filter, 'push', labeled)).toBe('event push is not issues')
    expect(filterMismatch(filter, 'issues', { ...labeled, action: 'opened' })).toBe(
      'action opened is not labeled',
    )
    expect(filterMismatch(filter, 'issues', { ...labeled, label: { name: 'bug' } })).toBe(
      'label bug is not agent',
    )
  })
})

describe('webhook signatures', () => {
  it('accepts the HMAC of the raw body and refuses anything else', () => {
    const body = Buffer.from('{"a":1}')
    const header = signBody('secret', body)
    expect(verifySignature('secret', body, header)).toBe(true)
    expect(verifySignature('secret', body, header.toUpperCase().replace('SHA256', 'sha256'))).toBe(true)
    expect(verifySignature('other', body, header)).toBe(false)
    expect(verifySignature('secret', Buffer.from('{"a":2}'), header)).toBe(false)
    expect(verifySignature('secret', body, undefined)).toBe(false)
    expect(verifySignature('secret', body, 'sha256=abc')).toBe(false)
    expect(verifySignature('secret', body, header.replace('sha256=', 'sha1='))).toBe(false)
  })
})
