// Issue 17 item 3: a user-set base URL was checked only on its string, so a DNS name answering 127.0.0.1
// (or the metadata address, or a rebinding answer) reached loopback services with the daemon's requests.
// The check now runs on the resolved addresses, where the socket is opened.
import { createServer, type Server } from 'node:http'
import type { LookupAddress } from 'node:dns'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import { createGuardedFetch, createGuardedLookup, RefusedAddressError } from './guarded-connection.js'

/** A resolver that answers every name with `addresses` (as dns.lookup with `all: true` would). */
function resolverOf(...addresses: string[]) {
  const asked: string[] = []
  const resolve = (
    hostname: string,
    _options: object,
    callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => {
    asked.push(hostname)
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )
  }
  return Object.assign(resolve, { asked })
}

function lookupOnce(
  lookup: ReturnType<typeof createGuardedLookup>,
  hostname: string,
  all: boolean,
): Promise<{ error: Error | null; result: unknown }> {
  return new Promise((resolve) => {
    lookup(hostname, all ? { all: true } : {}, (error, address, family) =>
      resolve({ error, result: all ? address : { address, family } }),
    )
  })
}

describe('guarded-connection', () => {
  it.each([
    ['127.0.0.1', 'loopback or private'],
    ['10.1.2.3', 'loopback or private'],
    ['::1', 'loopback or private'],
    ['::ffff:127.0.0.1', 'loopback or private'],
    ['169.254.169.254', 'link-local or cloud metadata'],
    ['fd00:ec2::254', 'link-local or cloud metadata'],
  ])('refuses a name resolving to %s without the opt-in', async (address, kind) => {
    const lookup = createGuardedLookup({ allowPrivate: false }, resolverOf(address))
    for (const all of [true, false]) {
      const { error } = await lookupOnce(lookup, 'model.example.test', all)
      expect(error).toBeInstanceOf(RefusedAddressError)
      expect(error?.message).toContain(`(host model.example.test) resolves to a ${kind} address`)
      // The user learns which name was refused, not which internal address it has.
      expect(error?.message).not.toContain(address)
    }
  })

  it('allows loopback and private addresses with the opt-in, never metadata', async () => {
    const open = (address: string) => createGuardedLookup({ allowPrivate: true }, resolverOf(address))
    expect((await lookupOnce(open('192.168.1.20'), 'lan.test', false)).result).toEqual({
      address: '192.168.1.20',
      family: 4,
    })
    expect((await lookupOnce(open('169.254.169.254'), 'metadata.test', false)).error).toBeInstanceOf(
      RefusedAddressError,
    )
  })

  it('refuses a name when any of its addresses is refused (a socket may try each)', async () => {
    const lookup = createGuardedLookup({ allowPrivate: false }, resolverOf('93.184.216.34', '127.0.0.1'))
    expect((await lookupOnce(lookup, 'mixed.test', true)).error).toBeInstanceOf(RefusedAddressError)
  })

  it('passes public addresses on in the shape the caller asked for', async () => {
    const lookup = createGuardedLookup({ allowPrivate: false }, resolverOf('93.184.216.34', '2606:2800::1'))
    expect((await lookupOnce(lookup, 'public.test', true)).result).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800::1', family: 6 },
    ])
    expect((await lookupOnce(lookup, 'public.test', false)).result).toEqual({
      address: '93.184.216.34',
      family: 4,
    })
  })

  describe('createGuardedFetch', () => {
    let server: Server
    let port: number
    const hits: string[] = []

    beforeAll(async () => {
      server = createServer((req, res) => {
        hits.push(`${req.method} ${req.url} ${req.headers['x-api-key'] ?? ''}`)
        res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' })
        res.end(JSON.stringify({ ok: true }))
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      port = (server.address() as AddressInfo).port
    })

    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

    it('refuses a name resolving to loopback before any byte is sent', async () => {
      const guarded = createGuardedFetch({ allowPrivate: false }, resolverOf('127.0.0.1'))
      hits.length = 0
      await expect(guarded(`http://models.example.test:${port}/v1/chat`, { method: 'POST' })).rejects.toThrow(
        RefusedAddressError,
      )
      expect(hits).toEqual([])
    })

    it('refuses an IP literal (which never reaches lookup) on its string', async () => {
      const guarded = createGuardedFetch({ allowPrivate: false }, resolverOf('93.184.216.34'))
      hits.length = 0
      await expect(guarded(`http://127.0.0.1:${port}/v1/chat`)).rejects.toThrow(AppError)
      expect(hits).toEqual([])
    })

    it('connects with the opt-in and answers like fetch', async () => {
      const resolve = resolverOf('127.0.0.1')
      const guarded = createGuardedFetch({ allowPrivate: true }, resolve)
      hits.length = 0
      const response = await guarded(`http://models.example.test:${port}/v1/chat?x=1`, {
        method: 'POST',
        headers: { 'x-api-key': 'user-key' },
        body: JSON.stringify({ hello: 'world' }),
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('x-upstream')).toBe('yes')
      expect(await response.json()).toEqual({ ok: true })
      expect(hits).toEqual(['POST /v1/chat?x=1 user-key'])
      expect(resolve.asked).toEqual(['models.example.test'])
    })
  })
})
