// HTTP content codings the proxy can read: the request body it rewrites (decoded off the event loop, bounded)
// and the response copy its usage meter reads (decoded as it streams). One list, so both directions agree.
import { promisify } from 'node:util'
import {
  brotliDecompress,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  gunzip,
  inflate,
  type ZlibOptions,
} from 'node:zlib'
import type { Transform } from 'node:stream'

type Coding = 'gzip' | 'deflate' | 'br'

/** More layers than any client sends: a longer list is refused rather than decoded layer after layer. */
const MAX_CODINGS = 3

function codingOf(name: string): Coding | 'identity' | undefined {
  switch (name.trim().toLowerCase()) {
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

/**
 * The codings of a `Content-Encoding` header in the order they were applied, identity left out (`[]` for
 * none), or undefined when one is unknown (`compress`, `zstd`, a typo) or there are too many.
 */
export function codingsOf(header: string | string[] | undefined): Coding[] | undefined {
  const names = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')
  const codings: Coding[] = []
  for (const name of names) {
    if (name.trim() === '') continue
    const coding = codingOf(name)
    if (coding === undefined) return undefined
    if (coding !== 'identity') codings.push(coding)
  }
  return codings.length > MAX_CODINGS ? undefined : codings
}

/** The decoded body would be larger than the limit (a decompression bomb, or just too big). */
export class DecodedBodyTooLarge extends Error {}

/** The body is not what its coding says (corrupt or truncated). */
export class UndecodableBody extends Error {}

const DECODE: Record<Coding, (body: Buffer, options: ZlibOptions) => Promise<Buffer>> = {
  gzip: promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress) as (body: Buffer, options: ZlibOptions) => Promise<Buffer>,
}

/**
 * The body with its codings undone, last applied first. zlib works on its thread pool, so a bomb never
 * blocks the event loop, and each layer stops at `maxBytes` (DecodedBodyTooLarge).
 */
export async function decodeBody(
  body: Buffer,
  codings: readonly Coding[],
  maxBytes: number,
): Promise<Buffer> {
  let decoded = body
  // Larger chunks than zlib's 16 KB default: fewer hops between the pool and the event loop.
  const options = { maxOutputLength: maxBytes, chunkSize: 64 * 1024 }
  for (const coding of [...codings].reverse()) {
    try {
      decoded = await DECODE[coding](decoded, options)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new DecodedBodyTooLarge()
      throw new UndecodableBody(`the ${coding} request body could not be decompressed`)
    }
  }
  return decoded
}

/** A streaming decoder for an encoded body; undefined when it is not encoded (or not in a coding we know). */
export function createBodyDecoder(header: string | undefined): Transform | undefined {
  const codings = codingsOf(header)
  // Usage is read from a copy: a layered or unknown response coding is passed on unread.
  if (codings?.length !== 1) return undefined
  switch (codings[0]) {
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
