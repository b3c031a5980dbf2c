// Issue 17 item 11: the MCP body checks on their own — what is answered here and what goes on to the SDK.
// test/security/malformed-input.test.ts drives them through a real daemon socket.
import { describe, expect, it } from 'vitest'
import { checkMcpBody } from './mcp-request-check.js'

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
}

describe('checkMcpBody', () => {
  it('passes well-formed messages, notifications and unknown methods on to the SDK', () => {
    const notification = { jsonrpc: '2.0', method: 'notifications/initialized', params: 'not checked' }
    const unknown = { jsonrpc: '2.0', id: 2, method: 'no/such/method', params: 42 }
    for (const body of [INITIALIZE, [INITIALIZE], notification, unknown, { id: 3, method: 'initialize' }])
      expect(checkMcpBody(encode(body))).toEqual({ ok: true, body })
  })

  it('answers bad params with -32602 and one line naming the field', () => {
    const bad = { ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: 7 } }
    expect(checkMcpBody(encode(bad))).toEqual({
      ok: false,
      answer: {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32602,
          message:
            'Invalid params for initialize: params.protocolVersion: Invalid input: expected string, received number',
        },
      },
    })
    const call = { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { arguments: {} } }
    const answer = checkMcpBody(encode(call))
    expect(answer).toMatchObject({ ok: false, answer: { id: 'c', error: { code: -32602 } } })
    expect(JSON.stringify(answer)).toMatch(/Invalid params for tools\/call: params\.name: /)
  })

  it('answers every request of a batch that holds a bad one, and runs none of it', () => {
    const ping = { jsonrpc: '2.0', id: 5, method: 'ping' }
    const bad = { jsonrpc: '2.0', id: 6, method: 'tools/call', params: {} }
    const note = { jsonrpc: '2.0', method: 'notifications/initialized' }
    const check = checkMcpBody(encode([ping, bad, note]))
    expect(check).toMatchObject({
      ok: false,
      answer: [
        { id: 5, error: { code: -32600, message: expect.stringMatching(/^Invalid Request: not run/) } },
        { id: 6, error: { code: -32602 } },
      ],
    })
  })

  it('refuses an empty batch, broken JSON and invalid UTF-8', () => {
    expect(checkMcpBody(encode([]))).toMatchObject({
      ok: false,
      answer: { id: null, error: { code: -32600 } },
    })
    expect(checkMcpBody(new TextEncoder().encode('{"jsonrpc":'))).toMatchObject({
      ok: false,
      answer: { error: { code: -32700, message: 'Parse error: Invalid JSON' } },
    })
    expect(checkMcpBody(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]))).toMatchObject({
      ok: false,
      answer: { error: { code: -32700, message: expect.stringMatching(/not valid UTF-8/) } },
    })
  })
})
