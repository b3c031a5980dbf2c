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
const LOGIN_STYLE = `body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1b1b1f;background:#fff}
@media (prefers-color-scheme:dark){body{color:#e8e8ec;background:#16161a}}`

const LOGIN_SCRIPT = `
const status = document.getElementById('status')
const token = location.hash.slice(1)
history.replaceState(null, '', location.pathname)
if (!token) status.textContent = 'This sign-in link is incomplete. Run "hangar login" for a fresh one.'
else fetch('/api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })
  .then(async (response) => {
    if (response.ok) { location.replace('/'); return }
    const body = await response.json().catch(() => null)
    status.textContent = (body && body.error && body.error.message) || 'Sign-in failed.'
  })
  .catch(() => { status.textContent = 'Cannot reach the Hangar daemon.' })
`

const LOGIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Hangar</title>
<style>${LOGIN_STYLE}</style></head>
<body><main><h1>Hangar</h1><p id="status" role="status">Signing you in…</p></main>
<script>${LOGIN_SCRIPT}</script></body></html>`

const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

/** Nothing but the page's own script and style, its one request to /api/login, and never in a frame. */
export const LOGIN_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src ${hashOf(LOGIN_SCRIPT)}`,
  `style-src ${hashOf(LOGIN_STYLE)}`,
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
