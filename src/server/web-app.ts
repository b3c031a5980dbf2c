// The web UI: the files `vite build` wrote to dist/web, served from memory. Hashed assets are cached for
// good; the app shell (index.html, the service worker, the manifest) is revalidated on every load so a new
// build reaches people at once. Any other GET outside /api, /proxy and /login is a client-side route and
// gets index.html. Without a build (a checkout where only tsc ran) `/` explains how to get one.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { createHash } from 'node:crypto'
import type { Context, Env, Hono } from 'hono'

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
}

/**
 * The built UI loads only its own files: Vite emits no inline script or style (a check in web-app.test.ts
 * keeps it so), and React's `style` props are set through the DOM, which style-src does not govern. The
 * API, its SSE streams and the service worker are same-origin. Never framed (clickjacking).
 */
export const WEB_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** The page shown without a build: no script at all, and its one inline style attribute. */
const NOT_BUILT_CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'"

/** Small text files gain nothing from gzip; binary images are compressed already. */
const GZIP_MIN_BYTES = 1024

interface WebFile {
  body: Uint8Array
  gzipped: Uint8Array | null
  contentType: string
  etag: string
  immutable: boolean
}

const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Hangar</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font:16px system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem">
<h1>Hangar</h1><p>The daemon is running, but its web UI was not built. Run <code>npm run build</code> in the
Hangar checkout (<code>npm start</code> does it), then reload. The API is under <code>/api</code>.</p>
</body></html>`

/** dist/web of the package this file belongs to (src/server in a checkout, dist/src/server or the bundle in dist/bin when built). */
export function defaultWebRoot(): string {
  let directory = path.dirname(fileURLToPath(import.meta.url))
  while (!existsSync(path.join(directory, 'package.json'))) {
    const parent = path.dirname(directory)
    if (parent === directory) break
    directory = parent
  }
  return path.join(directory, 'dist', 'web')
}

function loadFiles(root: string): Map<string, WebFile> {
  const files = new Map<string, WebFile>()
  if (!existsSync(path.join(root, 'index.html'))) return files
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory)) {
      const full = path.join(directory, entry)
      if (statSync(full).isDirectory()) {
        walk(full)
        continue
      }
      const body = readFileSync(full)
      const urlPath = '/' + path.relative(root, full).split(path.sep).join('/')
      const contentType = CONTENT_TYPES[path.extname(entry)] ?? 'application/octet-stream'
      const compressible = /^(text\/|application\/(json|manifest)|image\/svg)/.test(contentType)
      files.set(urlPath, {
        body,
        gzipped: compressible && body.length >= GZIP_MIN_BYTES ? gzipSync(body) : null,
        contentType,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
        // Vite names what it emits under assets/ after a hash of the content.
        immutable: urlPath.startsWith('/assets/'),
      })
    }
  }
  walk(root)
  return files
}

function send(context: Context, file: WebFile): Response {
  const headers: Record<string, string> = {
    'Content-Type': file.contentType,
    ETag: file.etag,
    'Cache-Control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    Vary: 'Accept-Encoding',
  }
  if (file.contentType.startsWith('text/html')) {
    headers['Referrer-Policy'] = 'no-referrer'
    headers['X-Frame-Options'] = 'DENY'
    headers['Content-Security-Policy'] = WEB_CONTENT_SECURITY_POLICY
  }
  if (context.req.header('if-none-match') === file.etag) return context.body(null, 304, headers)
  const gzip = file.gzipped && /\bgzip\b/.test(context.req.header('accept-encoding') ?? '')
  if (gzip) headers['Content-Encoding'] = 'gzip'
  if (context.req.method === 'HEAD') return context.body(null, 200, headers)
  return context.body(new Uint8Array(gzip ? file.gzipped! : file.body), 200, headers)
}

/** Paths the server owns: never answered with the app shell. */
const SERVER_PATHS = /^\/(api|proxy|login)(\/|$)/

export function registerWebApp<E extends Env>(app: Hono<E>, options: { root: string }): void {
  const files = loadFiles(options.root)
  const shell = files.get('/index.html')
  app.on(['GET', 'HEAD'], '*', async (context, next) => {
    const urlPath = context.req.path
    if (SERVER_PATHS.test(urlPath)) return next()
    // Browsers ask for /favicon.ico on pages that name no icon (an API response opened in a tab): the SVG.
    const file = files.get(urlPath === '/favicon.ico' ? '/icon.svg' : urlPath)
    if (file) return send(context, file)
    if (!shell) {
      if (urlPath !== '/') return next()
      context.header('Content-Security-Policy', NOT_BUILT_CONTENT_SECURITY_POLICY)
      context.header('X-Frame-Options', 'DENY')
      context.header('X-Content-Type-Options', 'nosniff')
      return context.html(NOT_BUILT_PAGE)
    }
    // A missing hashed asset is a stale page asking for an old build: a 404, not the shell.
    if (urlPath.startsWith('/assets/') || path.extname(urlPath) !== '') return next()
    return send(context, shell)
  })
}
