// The credential of an inbound webhook: an HMAC-SHA256 of the raw body with the trigger's secret, in
// GitHub's header (`X-Hub-Signature-256: sha256=<hex>`) or Hangar's (`X-Hangar-Signature-256`, same form).
// Compared in constant time; a malformed header is a bad signature, never an error that says more.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export const SIGNATURE_HEADERS = ['x-hub-signature-256', 'x-hangar-signature-256'] as const
export const DELIVERY_HEADERS = ['x-github-delivery', 'x-hangar-delivery'] as const
export const EVENT_HEADERS = ['x-github-event', 'x-hangar-event'] as const

export function signBody(secret: string, body: Uint8Array | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

export function verifySignature(secret: string, body: Uint8Array, header: string | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header.trim())) return false
  const expected = Buffer.from(signBody(secret, body).slice('sha256='.length), 'hex')
  const given = Buffer.from(header.trim().slice('sha256='.length).toLowerCase(), 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** A new webhook secret: 32 random bytes, `whsec_` + base64url. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`
}

/** The first header of `names` that is present. */
export function firstHeader(headers: Headers, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = headers.get(name)
    if (value !== null && value !== '') return value
  }
  return undefined
}
