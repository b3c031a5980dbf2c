// Authentication for /api: a bearer credential (a PAT, or the CLI's session from daemon.json) or the
// browser's session cookie. Cookie-authenticated writes must come from our own origin (CSRF).
import type { Context, MiddlewareHandler } from 'hono'
import { getCookie } from 'hono/cookie'
import { AppError } from '../core/errors.js'
import type { AuthService, Principal } from '../store/auth-service.js'

export const SESSION_COOKIE = 'hangar_session'

export type AppVariables = { principal: Principal; requestId: string }

/** Who did it, for the audit log: `user:<id>` with a session, `pat:<id>` with a token. */
export function actorOf(principal: Principal): string {
  return principal.via === 'session' ? `user:${principal.user.id}` : `pat:${principal.tokenId}`
}

export function createAuthMiddleware(auth: AuthService): MiddlewareHandler<{ Variables: AppVariables }> {
  return async (context, next) => {
    const header = context.req.header('authorization')
    let principal: Principal
    if (header) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
      if (!match) throw new AppError('unauthorized', 'the Authorization header must be "Bearer <token>"')
      principal = await auth.authenticate(match[1]!)
      if (principal.via === 'token' && principal.kind === 'proxy') {
        throw new AppError('unauthorized', 'a proxy token only works on /proxy URLs', {
          hint: 'create an API token with hangar token create',
        })
      }
    } else {
      const cookie = getCookie(context, SESSION_COOKIE)
      if (!cookie) {
        throw new AppError('unauthorized', 'sign in first', {
          hint: 'open the link from hangar login, or send Authorization: Bearer <token>',
        })
      }
      principal = await auth.authenticate(cookie)
      if (principal.via !== 'session') throw new AppError('unauthorized', 'the session cookie is not valid')
      checkSameOrigin(context)
    }
    context.set('principal', principal)
    await next()
  }
}

function checkSameOrigin(context: Context): void {
  if (['GET', 'HEAD', 'OPTIONS'].includes(context.req.method)) return
  const origin = context.req.header('origin')
  const host = context.req.header('host')
  // An opaque origin (`Origin: null`, from a sandboxed frame or a redirect) is never ours.
  if (origin && host && (!URL.canParse(origin) || new URL(origin).host !== host)) {
    throw new AppError('forbidden', `cross-origin request from ${origin} refused`)
  }
}

/** Token management and other account operations need a person's session, not a PAT. */
export function requireSession(
  context: Context<{ Variables: AppVariables }>,
): Extract<Principal, { via: 'session' }> {
  const principal = context.get('principal')
  if (principal.via !== 'session') {
    throw new AppError('forbidden', 'a personal access token cannot manage tokens', {
      hint: 'use the web UI or the hangar CLI',
    })
  }
  return principal
}
