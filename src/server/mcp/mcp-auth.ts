// Who is calling the MCP endpoint: a personal access token of kind `user`, sent as a bearer token. Not the
// browser's cookie (an MCP client has none, and accepting it would open the endpoint to cross-site
// posts), not the CLI's session, not a proxy token. Every refusal is a 401, which the error handler
// answers with `WWW-Authenticate: Bearer`.
import { AppError } from '../../core/errors.js'
import type { AuthService, Principal } from '../../store/auth-service.js'

export type PatPrincipal = Extract<Principal, { via: 'token' }>

const HINT = 'send Authorization: Bearer <token> with a token from hangar token create'

export async function authenticatePat(
  auth: Pick<AuthService, 'authenticate'>,
  header: string | undefined,
): Promise<PatPrincipal> {
  if (!header)
    throw new AppError('unauthorized', 'the MCP endpoint needs a personal access token', { hint: HINT })
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!match)
    throw new AppError('unauthorized', 'the Authorization header must be "Bearer <token>"', { hint: HINT })
  const principal = await auth.authenticate(match[1]!)
  if (principal.via !== 'token') {
    throw new AppError('unauthorized', 'the MCP endpoint takes a personal access token, not a session', {
      hint: HINT,
    })
  }
  if (principal.kind !== 'user') {
    throw new AppError('unauthorized', 'a proxy token only works on /proxy URLs', { hint: HINT })
  }
  return principal
}
