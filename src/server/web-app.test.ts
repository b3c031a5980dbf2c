import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registerWebApp } from './web-app.js'

describe('registerWebApp', () => {
  let root: string
  const shell = '<!doctype html><html><body><div id="root"></div></body></html>'
  const script = `console.log(${JSON.stringify('x'.repeat(4000))})`

  function appFor(webRoot: string): Hono {
    const app = new Hono()
    registerWebApp(app, { root: webRoot })
    app.get('/api/health', (context) => context.json({ ok: true }))
    app.notFound((context) => context.json({ error: { code: 'not_found' } }, 404))
    return app
  }

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-web-'))
    await mkdir(path.join(root, 'assets'))
    await writeFile(path.join(root, 'index.html'), shell)
    await writeFile(path.join(root, 'assets', 'index-abc123.js'), script)
    await writeFile(path.join(root, 'sw.js'), 'self.addEventListener("fetch", () => {})')
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('serves the shell at / and for client-side routes, revalidated on every load', async () => {
    const app = appFor(root)
    for (const url of ['/', '/conversations/conv_1', '/settings']) {
      const response = await app.request(url)
      expect(response.status, url).toBe(200)
      expect(response.headers.get('content-type')).toContain('text/html')
      expect(response.headers.get('cache-control')).toBe('no-cache')
      expect(await response.text()).toBe(shell)
    }
  })

  it('caches hashed assets for good, gzips them when asked, and answers a matching ETag with 304', async () => {
    const app = appFor(root)
    const plain = await app.request('/assets/index-abc123.js')
    expect(plain.headers.get('cache-control')).toContain('immutable')
    expect(plain.headers.get('content-type')).toContain('text/javascript')
    expect(await plain.text()).toBe(script)
    const gzipped = await app.request('/assets/index-abc123.js', {
      headers: { 'accept-encoding': 'gzip, br' },
    })
    expect(gzipped.headers.get('content-encoding')).toBe('gzip')
    expect(gunzipSync(Buffer.from(await gzipped.arrayBuffer())).toString()).toBe(script)
    const again = await app.request('/assets/index-abc123.js', {
      headers: { 'if-none-match': plain.headers.get('etag')! },
    })
    expect(again.status).toBe(304)
    expect((await app.request('/sw.js')).headers.get('cache-control')).toBe('no-cache')
  })

  it('leaves /api, /proxy, /login and missing files to the server: never the shell', async () => {
    const app = appFor(root)
    expect(await (await app.request('/api/health')).json()).toEqual({ ok: true })
    for (const url of [
      '/api/nothing',
      '/proxy/x/anthropic/v1/messages',
      '/login',
      '/assets/index-old.js',
      '/favicon.ico',
    ]) {
      const response = await app.request(url)
      expect(response.status, url).toBe(404)
      expect(await response.text()).not.toContain('id="root"')
    }
  })

  it('answers /favicon.ico with the SVG icon when the build has one', async () => {
    const withIcon = await mkdtemp(path.join(os.tmpdir(), 'hangar-web-icon-'))
    try {
      const icon = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"/>'
      await writeFile(path.join(withIcon, 'index.html'), shell)
      await writeFile(path.join(withIcon, 'icon.svg'), icon)
      const response = await appFor(withIcon).request('/favicon.ico')
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('image/svg+xml')
      expect(await response.text()).toBe(icon)
    } finally {
      await rm(withIcon, { recursive: true, force: true })
    }
  })

  it('explains how to build the UI when there is no build', async () => {
    const app = appFor(path.join(root, 'missing'))
    const response = await app.request('/')
    expect(response.status).toBe(200)
    expect(await response.text()).toContain('npm run build')
    expect((await app.request('/settings')).status).toBe(404)
  })
})
