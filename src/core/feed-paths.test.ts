// Issue 17 item 4: a feed path is sent with a service's credentials, so it must name exactly what it says.
import { describe, expect, it } from 'vitest'
import { feedPathProblem, isUnderPathPrefix } from './feed-paths.js'

describe('feed-paths', () => {
  it('accepts ordinary paths, queries and {agent} placeholders', () => {
    for (const path of ['/', '/api/v1/summary', '/api/v1/', '/a.b/c..d/e.', '/alerts/{agent}?since=1h&x=%2F'])
      expect(feedPathProblem(path), path).toBeUndefined()
  })

  it.each([
    ['/../../etc/passwd', 'a ".." segment'],
    ['/a/..', 'a ".." segment'],
    ['/a/./b', 'a "." segment'],
    ['/a/..;jsessionid=1/b', 'a ".." segment'],
    ['/%2e%2e/x', 'encoded character "%2e"'],
    ['/%2E%2E/x', 'encoded character "%2E"'],
    ['/a%2fb', 'encoded character "%2f"'],
    ['/a%5Cb', 'encoded character "%5C"'],
    ['/%252e%252e/x', 'encoded character "%25"'],
    ['/a%00b', 'encoded character "%00"'],
    ['/a\\b', 'backslash'],
    ['//evil.example/x', 'empty segment'],
    ['/a//b', 'empty segment'],
    ['/.\t./x', 'printable ASCII'],
    ['/a b', 'printable ASCII'],
    ['/caf\u00e9', 'printable ASCII'],
    ['/a#b', 'fragment'],
    ['api/v1', 'start with "/"'],
  ])('refuses %j (%s)', (path, reason) => {
    expect(feedPathProblem(path)).toContain(reason)
  })

  it('matches a prefix on segment boundaries only', () => {
    expect(isUnderPathPrefix('/api/v1', '/api/v1')).toBe(true)
    expect(isUnderPathPrefix('/api/v1/x', '/api/v1')).toBe(true)
    expect(isUnderPathPrefix('/api/v1/x', '/api/v1/')).toBe(true)
    expect(isUnderPathPrefix('/api/v1?all=1', '/api/v1')).toBe(true)
    expect(isUnderPathPrefix('/api/v1admin', '/api/v1')).toBe(false)
    expect(isUnderPathPrefix('/api/v2/x', '/api/v1')).toBe(false)
    expect(isUnderPathPrefix('/api', '/api/v1')).toBe(false)
    expect(isUnderPathPrefix('/anything', '/')).toBe(true)
  })
})
