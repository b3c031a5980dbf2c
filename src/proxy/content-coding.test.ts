// Issue 17 items 6 and 10: a body in a coding the proxy did not know (`compress`, `identity, identity`)
// skipped its checks, and gzip bodies were inflated synchronously on the event loop.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { codingsOf, DecodedBodyTooLarge, decodeBody, UndecodableBody } from './content-coding.js'

describe('content-coding', () => {
  it('reads a Content-Encoding list in the order it was applied, identity left out', () => {
    expect(codingsOf(undefined)).toEqual([])
    expect(codingsOf('')).toEqual([])
    expect(codingsOf('identity')).toEqual([])
    expect(codingsOf('identity, identity')).toEqual([])
    expect(codingsOf('GZIP')).toEqual(['gzip'])
    expect(codingsOf('x-gzip, br')).toEqual(['gzip', 'br'])
    expect(codingsOf(['deflate', 'gzip'])).toEqual(['deflate', 'gzip'])
  })

  it('refuses an unknown coding anywhere in the list, and an endless one', () => {
    expect(codingsOf('compress')).toBeUndefined()
    expect(codingsOf('zstd')).toBeUndefined()
    expect(codingsOf('gzip, compress')).toBeUndefined()
    expect(codingsOf('identity;q=1')).toBeUndefined()
    expect(codingsOf('gzip, gzip, gzip, gzip')).toBeUndefined()
  })

  it('decodes each coding, and layers last applied first', async () => {
    const text = Buffer.from('{"model":"m"}')
    expect(await decodeBody(gzipSync(text), ['gzip'], 1024)).toEqual(text)
    expect(await decodeBody(deflateSync(text), ['deflate'], 1024)).toEqual(text)
    expect(await decodeBody(brotliCompressSync(text), ['br'], 1024)).toEqual(text)
    expect(await decodeBody(brotliCompressSync(gzipSync(text)), ['gzip', 'br'], 1024)).toEqual(text)
    expect(await decodeBody(text, [], 1024)).toBe(text)
  })

  it('stops a decompression bomb at the limit without holding the event loop', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024))
    let turns = 0
    const ticker = setInterval(() => turns++, 0)
    try {
      await expect(decodeBody(bomb, ['gzip'], 4 * 1024 * 1024)).rejects.toBeInstanceOf(DecodedBodyTooLarge)
    } finally {
      clearInterval(ticker)
    }
    // Asynchronous: timers ran while it inflated (a synchronous inflate allows none).
    expect(turns).toBeGreaterThan(0)
  })

  it('says which coding a corrupt body failed', async () => {
    await expect(decodeBody(Buffer.from('not gzip'), ['gzip'], 1024)).rejects.toThrow(UndecodableBody)
    await expect(decodeBody(Buffer.from('not gzip'), ['gzip'], 1024)).rejects.toThrow(/gzip/)
  })
})
