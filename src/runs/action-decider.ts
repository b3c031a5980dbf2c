// Who may confirm or reject a proposal, decided once in the actions service for every path (REST, MCP,
// the CLI through a daemon or in process): a signed-in person (browser or CLI session) of the action's
// owner, the operator's own CLI with the store opened directly, or a user PAT with the `approve` scope.
// An `api`-only PAT may propose (MCP write tools) and read, never decide. The owner check is the
// user scope of the store: another user's action answers 404.
import { AppError } from '../core/errors.js'
import { actorOf, type Principal } from '../store/auth-service.js'
import type { User } from '../store/repositories/users-repository.js'

/** A principal of the API, or the CLI on the daemon host with no daemon (it opened the store itself). */
export type Decider = Principal | { via: 'local'; user: User }

export const APPROVE_SCOPE_HINT =
  'create one with: hangar token create --name NAME --scope approve; or decide in the web UI or with hangar actions confirm|reject ID'

/**
 * Whether this caller may commit a change on the user's behalf — confirm or reject a proposal, land a
 * workspace into the user's repository: a person, or a user PAT with the `approve` scope.
 */
export function mayDecide(decider: Decider): boolean {
  return decider.via !== 'token' || (decider.kind === 'user' && decider.scopes.includes('approve'))
}

/** Throws `forbidden` unless this decider may confirm or reject proposals. */
export function assertMayDecide(decider: Decider): void {
  if (mayDecide(decider)) return
  if (decider.via !== 'token') return
  throw new AppError(
    'forbidden',
    `token ${decider.tokenId} lacks the "approve" scope needed to confirm or reject proposals`,
    { hint: APPROVE_SCOPE_HINT },
  )
}

/** The audit actor: `user:<id>` for a person (session or local CLI), `pat:<id>` for a token. */
export function deciderActor(decider: Decider): string {
  return decider.via === 'local' ? `user:${decider.user.id}` : actorOf(decider)
}
