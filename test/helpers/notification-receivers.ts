// Test-only receivers of Hangar's notifications, on loopback: a webhook receiver that checks the
// `X-Hangar-Signature-256` HMAC over the raw body, and a push service that checks the VAPID JWT (ES256
// over its own origin as the audience, RFC 8292) and decrypts the aes128gcm payload with the subscription's
// private keys (RFC 8291, written here with node:crypto so the test does not trust the sender's library).
import {
  createDecipheriv,
  createECDH,
  createHmac,
  createPublicKey,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
  verify,
} from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedRequest {
  at: number
  path: string
  headers: http.IncomingHttpHeaders
  body: Buffer
}

export interface Receiver<Extra> {
  url: string
  received: (ReceivedRequest & Extra)[]
  /** Answer the next `count` requests with this status instead of success. */
  failNext(count: number, status?: number): void
  /** Resolves once `count` requests were answered with success. */
  waitFor(count: number, timeoutMs?: number): Promise<(ReceivedRequest & Extra)[]>
  close(): Promise<void>
}

async function startReceiver<Extra>(
  handle: (request: ReceivedRequest) => { status: number; extra: Extra },
  successStatus: number,
): Promise<Receiver<Extra>> {
  const received: (ReceivedRequest & Extra)[] = []
  let failures: { count: number; status: number } = { count: 0, status: 500 }
  const waiters = new Set<() => void>()
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const incoming = {
        at: Date.now(),
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks),
      }
      if (failures.count > 0) {
        failures.count--
        response.writeHead(failures.status).end('try later')
        return
      }
      let outcome: { status: number; extra: Extra }
      try {
        outcome = handle(incoming)
      } catch (error) {
        response.writeHead(400).end(String(error))
        return
      }
      if (outcome.status === successStatus) received.push({ ...incoming, ...outcome.extra })
      response.writeHead(outcome.status).end()
      for (const wake of waiters) wake()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    failNext(count, status = 500) {
      failures = { count, status }
    },
    waitFor(count, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(received.slice(0, count))
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`${received.length} of ${count} notifications arrived`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function hmacOf(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** A webhook receiver that answers 401 unless the body's HMAC matches the secret it was told. */
export async function startWebhookReceiver() {
  let secret = ''
  const receiver = await startReceiver<{ json: unknown }>((request) => {
    const given = String(request.headers['x-hangar-signature-256'] ?? '')
    const expected = hmacOf(secret, request.body)
    const ok = given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))
    if (!secret || !ok) return { status: 401, extra: { json: null } }
    const type = String(request.headers['content-type'] ?? '')
    return {
      status: 200,
      extra: { json: type.startsWith('application/json') ? JSON.parse(request.body.toString()) : null },
    }
  }, 200)
  return Object.assign(receiver, {
    setSecret(value: string) {
      secret = value
    },
  })
}

/** A browser's push subscription: its keys, made here, and the private half to decrypt with. */
export function makeSubscription(endpoint: string) {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  const auth = randomBytes(16)
  return {
    json: {
      endpoint,
      expirationTime: null,
      keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
    },
    ecdh,
    auth,
  }
}

/** RFC 8291: the aes128gcm record of a Web Push message, decrypted with the subscription's private key. */
export function decryptPush(body: Buffer, subscription: ReturnType<typeof makeSubscription>): string {
  const salt = body.subarray(0, 16)
  const idLength = body.readUInt8(20)
  const senderPublic = body.subarray(21, 21 + idLength)
  const ciphertext = body.subarray(21 + idLength)
  const receiverPublic = subscription.ecdh.getPublicKey()
  const shared = subscription.ecdh.computeSecret(senderPublic)
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), receiverPublic, senderPublic])
  const ikm = Buffer.from(hkdfSync('sha256', shared, subscription.auth, keyInfo, 32))
  const key = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16))
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12))
  const decipher = createDecipheriv('aes-128-gcm', key, nonce)
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16))
  const padded = Buffer.concat([
    decipher.update(ciphertext.subarray(0, ciphertext.length - 16)),
    decipher.final(),
  ])
  // The last record ends with the delimiter 0x02, then any zero padding.
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error('no last-record delimiter')
  return padded.subarray(0, end).toString('utf8')
}

/** Checks `Authorization: vapid t=<JWT>, k=<key>`: ES256 by that key, audience = this origin, not expired. */
export function verifyVapid(
  authorization: string,
  origin: string,
  publicKey: string,
): Record<string, unknown> {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization)
  if (!match) throw new Error(`not a VAPID authorization: ${authorization.slice(0, 20)}`)
  const [, token, key] = match as unknown as [string, string, string]
  if (key !== publicKey) throw new Error('signed with another key')
  const point = Buffer.from(key, 'base64url')
  const jwk = {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  }
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const valid = verify(
    'sha256',
    Buffer.from(`${header}.${payload}`),
    { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  )
  if (!valid) throw new Error('bad VAPID signature')
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>
  if (JSON.parse(Buffer.from(header, 'base64url').toString()).alg !== 'ES256') throw new Error('not ES256')
  if (claims.aud !== origin) throw new Error(`audience ${String(claims.aud)} is not ${origin}`)
  if (typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) throw new Error('expired')
  return claims
}

/**
 * A push service: 201 for a message whose VAPID JWT verifies (with the key `setVapidKey` named) and whose
 * payload decrypts with the subscription registered for its path; 401/400 otherwise.
 */
export async function startPushService() {
  let vapidKey = ''
  const subscriptions = new Map<string, ReturnType<typeof makeSubscription>>()
  let origin = ''
  const receiver = await startReceiver<{ message: Record<string, unknown>; claims: Record<string, unknown> }>(
    (request) => {
      let claims: Record<string, unknown>
      try {
        claims = verifyVapid(String(request.headers.authorization ?? ''), origin, vapidKey)
      } catch {
        return { status: 401, extra: { message: {}, claims: {} } }
      }
      const subscription = subscriptions.get(request.path)
      if (!subscription || request.headers['content-encoding'] !== 'aes128gcm')
        return { status: 404, extra: { message: {}, claims } }
      const message = JSON.parse(decryptPush(request.body, subscription)) as Record<string, unknown>
      return { status: 201, extra: { message, claims } }
    },
    201,
  )
  origin = receiver.url
  return Object.assign(receiver, {
    setVapidKey(value: string) {
      vapidKey = value
    },
    /** A new subscription whose endpoint is on this service. */
    subscribe() {
      const path = `/push/${randomBytes(8).toString('hex')}`
      const subscription = makeSubscription(`${receiver.url}${path}`)
      subscriptions.set(path, subscription)
      return subscription
    },
  })
}
