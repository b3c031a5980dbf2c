// HTTP content codings the proxy can read: the request body it rewrites (decoded at once, bounded) and the
// response copy its usage meter reads (decoded as it streams). One list, so both directions agree.
import {
  brotliDecompressSync,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  gunzipSync,
  inflateSync,
} from 'node:zlib'
import type { Transform } from 'node:stream'

type Coding = 'identity' | 'gzip' | 'deflate' | 'br'

function codingOf(header: string | undefined): Coding | undefined {
  switch ((header ?? '').trim().toLowerCase()) {
    case '':
    case 'identity':
      return 'identity'
    case 'gzip':
    case 'x-gzip':
      return 'gzip'
    case 'deflate':
      return 'deflate'
    case 'br':
      return 'br'
    default:
      return undefined
  }
}

/** The decoded body, or undefined for a coding we do not know; throws on a corrupt or oversize one. */
export function decodeBody(body: Buffer, header: string | undefined, maxBytes: number): Buffer | undefined {
  const options = { maxOutputLength: maxBytes }
  switch (codingOf(header)) {
    case 'identity':
      return body
    case 'gzip':
      return gunzipSync(body, options)
    case 'deflate':
      return inflateSync(body, options)
    case 'br':
      return brotliDecompressSync(body, options)
    default:
      return undefined
  }
}

/** A streaming decoder for an encoded body; undefined when it is not encoded (or not in a coding we know). */
export function createBodyDecoder(header: string | undefined): Transform | undefined {
  switch (codingOf(header)) {
    case 'gzip':
      return createGunzip()
    case 'deflate':
      return createInflate()
    case 'br':
      return createBrotliDecompress()
    default:
      return undefined
  }
}
