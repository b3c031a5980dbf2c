import net from 'node:net'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { checkBindAddress, isLoopbackHost, listen } from './listen.js'

describe('listen', () => {
  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(isLoopbackHost(host)).toBe(true)
    for (const host of ['0.0.0.0', '192.168.1.4', '::', 'example.com'])
      expect(isLoopbackHost(host)).toBe(false)
  })

  // Issue 17 item 10: a non-loopback bind needs --public (server.public) and says what it exposes.
  it('refuses a non-loopback address unless public, and lists what a public one exposes', () => {
    expect(checkBindAddress('127.0.0.1', { public: false })).toEqual({})
    expect(() => checkBindAddress('0.0.0.0', { public: false })).toThrow(/refusing to listen on 0\.0\.0\.0/)
    expect(checkBindAddress('0.0.0.0', { public: true }).exposure?.join('\n')).toMatch(
      /reachable from the network.*MCP.*proxy[\s\S]*TLS reverse proxy.*trustProxy/,
    )
  })

  it('reports a taken port as an AppError that says what to do', async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as net.AddressInfo).port
    try {
      await expect(listen(new Hono(), { host: '127.0.0.1', port })).rejects.toMatchObject({
        code: 'unavailable',
        hint: expect.stringContaining('--port'),
      })
    } finally {
      blocker.close()
    }
  })

  it('closes even with an idle keep-alive connection open', async () => {
    const app = new Hono().get('/', (context) => context.text('hi'))
    const server = await listen(app, { host: '127.0.0.1', port: 0 })
    const socket = net.connect(server.port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n')
    await new Promise<void>((resolve) => socket.once('data', () => resolve()))
    await server.close()
    socket.destroy()
  })
})
