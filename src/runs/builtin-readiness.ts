// Whether the built-in agent can run for a user now: "ready" means a run would reach a model (a provider
// chosen, with its key or a local endpoint), decided by the same resolution a run goes through
// (resolveBuiltinProvider), so the status can never say ready while the first message fails.
import { AppError } from '../core/errors.js'
import { ADAPTER_PERMISSIONS, permissionsInfo } from '../core/permissions.js'
import { BUILTIN_NO_PROVIDER, BUILTIN_PROVIDER_FIX } from './builtin-model.js'

/** The status the built-in agent shows when it cannot reach a model. */
export const BUILTIN_NEEDS_PROVIDER = 'needs a provider'

export type BuiltinReadiness =
  | { ready: true; provider: string; model: string; reason: string }
  | {
      ready: false
      problem: typeof BUILTIN_NEEDS_PROVIDER
      /** What is wrong when more than "no provider", and how to fix it. */
      fix: string
    }

/** Ready with the provider `resolve` finds; needs a provider (and says how) when it refuses. */
export async function builtinReadiness(
  resolve: () => Promise<{ provider: string; model: string; reason: string }>,
): Promise<BuiltinReadiness> {
  try {
    const { provider, model, reason } = await resolve()
    return { ready: true, provider, model, reason }
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    const fix =
      error.message === BUILTIN_NO_PROVIDER
        ? BUILTIN_PROVIDER_FIX
        : `${error.message}${error.hint ? `: ${error.hint}` : ''}`
    return { ready: false, problem: BUILTIN_NEEDS_PROVIDER, fix }
  }
}

/** The line `hangar agents` prints for the built-in agent (describeDetection's form). */
export function describeBuiltin(readiness: BuiltinReadiness): string {
  return readiness.ready
    ? `✓ builtin (provider: ${readiness.provider}, ${readiness.reason})`
    : `✗ builtin (${readiness.problem}: ${readiness.fix})`
}

/** The built-in agent as GET /api/agents, list_agents and `hangar agents --json` list it, beside the CLIs. */
export function builtinAgentEntry(readiness: BuiltinReadiness) {
  return {
    id: 'builtin',
    displayName: "Hangar's built-in agent",
    installed: true,
    verified: true,
    ready: readiness.ready,
    problem: readiness.ready ? null : readiness.problem,
    // As a CLI's sign-in: where its provider comes from, or how to give it one.
    auth: readiness.ready
      ? { state: 'ok' as const, source: `${readiness.provider} (${readiness.reason})` }
      : { state: 'missing' as const, hint: readiness.fix },
    // Our own code: nothing to have tested against.
    testedVersions: null,
    versionWarning: null,
    capabilities: {
      streaming: true,
      resume: true,
      surgicalEdit: true,
      nativeSkillLoading: false,
      // Every write and command is a proposal a person confirms (or autoApprove).
      permissionMode: ADAPTER_PERMISSIONS.builtin.enforces,
      contextWindowHint: null,
    },
    permissions: permissionsInfo('builtin'),
  }
}
