import { describe, expect, it } from 'vitest'
import { codeForFailure, codeForHttpStatus, httpStatusInText } from './agent-error-codes.js'

describe('agent-error-codes', () => {
  it('finds the HTTP status in the error texts the CLIs print', () => {
    expect(httpStatusInText('Failed to authenticate. API Error: 401 {"type":"error"}')).toBe(401)
    expect(httpStatusInText('Reconnecting... 1/5 (unexpected status 401 Unauthorized: bad key)')).toBe(401)
    expect(httpStatusInText('request failed (authentication failed, HTTP 401). Re-authenticate')).toBe(401)
    expect(httpStatusInText('[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}]')).toBe(429)
    expect(httpStatusInText('{"statusCode":503}')).toBe(503)
  })

  it('finds no status in texts that only contain other numbers', () => {
    expect(httpStatusInText('Reconnecting... 1/5')).toBeUndefined()
    expect(httpStatusInText('exited with code 130 after 401 ms')).toBeUndefined()
  })

  it('maps statuses to codes and falls back to agent_error', () => {
    expect(codeForHttpStatus(403)).toBe('unauthorized')
    expect(codeForHttpStatus(429)).toBe('rate_limited')
    expect(codeForHttpStatus(500)).toBe('upstream_error')
    expect(codeForHttpStatus(200)).toBeUndefined()
    expect(codeForFailure(undefined, 'something broke')).toBe('agent_error')
    expect(codeForFailure(401, 'something broke')).toBe('unauthorized')
  })
})
