// Authentication for /api: a bearer credential (a PAT, or the CLI's session from daemon.json) or the
// browser's session cookie. Cookie-authenticated writes must come from our own origin (CSRF). Failed
// credentials count towards the client's limit (auth-rate-limiter.ts).
import type { Context, MiddlewareHandler } from 'hono'
import { getCookie } from 'hono/cookie'
import { AppError } from '../core/errors.js'
import type { AuthService, Principal } from '../store/auth-service.js'
import { checkCredential, type HttpGuards } from './auth-rate-limiter.js'
import { assertSameOrigin, LOOPBACK_POSTURE } from './http-posture.js'

export const SESSION_COOKIE = 'hangar_session'

export type AppVariables = {
  principal: Principal
  requestId: string
  /** Set for every request by the app: how to read the request's origin, and the failed-auth limit. */
  httpGuards: HttpGuards
}

/** The app's guards; absent only in a bare Hono app of a unit test. */
export function httpGuardsOf(context: Context): HttpGuards | undefined {
  return (context as Context<{ Variables: AppVariables }>).get('httpGuards') as HttpGuards | undefined
}

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
      principal = await checkCredential(context, httpGuardsOf(context), () => auth.authenticate(match[1]!))
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
      // Before the cookie is checked: a cross-site page must learn nothing, not even whether it is valid.
      assertSameOrigin(context, httpGuardsOf(context)?.posture ?? LOOPBACK_POSTURE)
      principal = await checkCredential(context, httpGuardsOf(context), async () => {
        const found = await auth.authenticate(cookie)
        if (found.via !== 'session') throw new AppError('unauthorized', 'the session cookie is not valid')
        return found
      })
    }
    context.set('principal', principal)
    await next()
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
