// Sign-in through a one-time link: `hangar login` prints `<url>/login#hgl_…`. The secret travels in the
// URL fragment, so it never reaches a server log or a Referer; the page posts it to /api/login, which
// sets an HttpOnly session cookie.
import { createHash } from 'node:crypto'
import type { Hono } from 'hono'
import { deleteCookie, setCookie } from 'hono/cookie'
import { z } from 'zod'
import { AppError } from '../../core/errors.js'
import { BROWSER_SESSION_TTL_MS } from '../../store/auth-service.js'
import type { ServerDeps } from '../app.js'
import { checkCredential } from '../auth-rate-limiter.js'
import { type AppVariables, createAuthMiddleware, httpGuardsOf, SESSION_COOKIE } from '../auth-middleware.js'
import { assertSameOrigin, LOOPBACK_POSTURE, requestScheme } from '../http-posture.js'
import { readJsonBody } from '../request-body.js'

/** The page's one script and one style, kept apart so the Content-Security-Policy can allow them by hash. */
const LOGIN_STYLE = `:root{color-scheme:light dark;--bg:light-dark(#f7f7f8,#15161a);--surface:light-dark(#fff,#1d1e23);--text:light-dark(#1b1b1f,#e8e8ec);--muted:light-dark(#5f6069,#a3a4ad);--border:light-dark(#dcdce2,#34353d);--bad:light-dark(#b42335,#ff8a98);--bad-bg:light-dark(#fbe7ea,#3d1a20);font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--text)}
main{max-width:30rem;margin:12vh auto 0;padding:0 1rem}
.brand{display:flex;align-items:center;gap:.5rem;font-weight:600;font-size:1.1rem;margin-bottom:1rem}
.card{background:var(--surface);border:1px solid var(--border);border-radius:8px;padding:1.25rem 1.5rem}
h1{font-size:1.25rem;margin:0 0 .5rem}p{margin:.5rem 0}.muted{color:var(--muted);font-size:.9rem}
.failed #status{color:var(--bad);background:var(--bad-bg);border-radius:6px;padding:.5rem .75rem}
code{font:13px ui-monospace,Menlo,Consolas,monospace}`

const LOGIN_SCRIPT = `
const status = document.getElementById('status')
const token = location.hash.slice(1)
history.replaceState(null, '', location.pathname)
const fail = (message) => { status.textContent = message; document.body.className = 'failed'; document.getElementById('help').hidden = false }
if (!token) fail('This sign-in link is incomplete.')
else fetch('/api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })
  .then(async (response) => {
    if (response.ok) { location.replace('/'); return }
    const body = await response.json().catch(() => null)
    fail((body && body.error && body.error.message) || 'Sign-in failed.')
  })
  .catch(() => fail('Cannot reach the Hangar daemon. Is "hangar up" still running?'))
`

const LOGIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Hangar</title><link rel="icon" href="/icon.svg" type="image/svg+xml">
<style>${LOGIN_STYLE}</style></head>
<body><main><div class="brand"><img src="/icon.svg" alt="" width="24" height="24"> Hangar</div>
<div class="card"><h1>Sign in</h1><p id="status" role="status">Signing you in…</p>
<p id="help" class="muted" hidden>Sign-in links work once and expire. Run <code>hangar login</code> on the daemon's host for a fresh one.</p></div></main>
<script>${LOGIN_SCRIPT}</script></body></html>`

const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

/** Nothing but the page's own script and style, its one request to /api/login, and never in a frame. */
export const LOGIN_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src ${hashOf(LOGIN_SCRIPT)}`,
  `style-src ${hashOf(LOGIN_STYLE)}`,
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

export function registerSessionRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: Pick<ServerDeps, 'auth'>,
): void {
  app.get('/login', (context) => {
    context.header('Cache-Control', 'no-store')
    context.header('Referrer-Policy', 'no-referrer')
    context.header('Content-Security-Policy', LOGIN_CONTENT_SECURITY_POLICY)
    context.header('X-Frame-Options', 'DENY')
    context.header('X-Content-Type-Options', 'nosniff')
    return context.html(LOGIN_PAGE)
  })

  app.post('/api/login', async (context) => {
    const guards = httpGuardsOf(context)
    const posture = guards?.posture ?? LOOPBACK_POSTURE
    // A form (text/plain, urlencoded, multipart) can be posted cross-site without a preflight; JSON cannot.
    const contentType = context.req.header('content-type')?.split(';')[0]?.trim().toLowerCase()
    if (contentType !== 'application/json') {
      throw new AppError('unsupported_media_type', 'sign-in takes a JSON body', {
        hint: 'send {"token": "hgl_…"} with Content-Type: application/json',
      })
    }
    // Login CSRF: another site must not sign a browser in to an account of its choosing.
    assertSameOrigin(context, posture)
    const body = await readJsonBody(context, z.strictObject({ token: z.string().min(1) }))
    const { user, sessionToken } = await checkCredential(context, guards, () =>
      deps.auth.redeemLoginLink(body.token),
    )
    setCookie(context, SESSION_COOKIE, sessionToken, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      // Over https directly, or through a trusted TLS reverse proxy (X-Forwarded-Proto).
      secure: requestScheme(context, posture) === 'https',
      maxAge: Math.floor(BROWSER_SESSION_TTL_MS / 1000),
    })
    return context.json({ user: { id: user.id, name: user.name, role: user.role } })
  })

  // Who is signed in: the web UI asks on load (a 401 means show how to sign in).
  app.get('/api/session', createAuthMiddleware(deps.auth), (context) => {
    const principal = context.get('principal')
    const { id, name, role } = principal.user
    return context.json({ user: { id, name, role }, via: principal.via })
  })

  app.post('/api/logout', createAuthMiddleware(deps.auth), async (context) => {
    await deps.auth.endSession(context.get('principal'))
    deleteCookie(context, SESSION_COOKIE, { path: '/' })
    return context.body(null, 204)
  })
}
