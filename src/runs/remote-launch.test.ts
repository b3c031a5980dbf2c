import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { boundPorts, pickTunnelPort } from './remote-launch.js'

describe('the SSH tunnel port', () => {
  it('reads the bound ports of /proc/net/tcp and tcp6 listings', () => {
    const listing = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:A530 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1',
      '   1: 0100007F:8C1F 0100007F:A530 01 00000000:00000000 00:00000000 00000000  1000        0 2 1',
      '  sl  local_address                         remote_address                        st',
      '   0: 00000000000000000000000001000000:4E20 00000000000000000000000000000000:0000 0A 0',
    ].join('\n')
    expect([...boundPorts(listing)].sort()).toEqual([0x4e20, 0x8c1f, 0xa530].sort())
  })

  it('sees a port this machine is listening on', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const port = (server.address() as { port: number }).port
      const listing = ['/proc/net/tcp', '/proc/net/tcp6'].map((file) => readFileSync(file, 'utf8')).join('')
      expect(boundPorts(listing).has(port)).toBe(true)
    } finally {
      server.close()
    }
  })

  it('picks a port below the ephemeral range and steps past taken ones', () => {
    expect(pickTunnelPort(new Set(), () => 0)).toBe(20_000)
    expect(pickTunnelPort(new Set([20_000, 20_001]), () => 0)).toBe(20_002)
    expect(pickTunnelPort(new Set([32_767]), () => 0.99999999)).toBe(20_000)
    for (let i = 0; i < 100; i++) {
      const port = pickTunnelPort(new Set())
      expect(port).toBeGreaterThanOrEqual(20_000)
      expect(port).toBeLessThan(32_768)
    }
  })
})
