// A profile made in the UI or over the API is an agent like one of hangar.yaml: it used to be refused as
// "unknown agent" because only hangar.yaml's profiles were looked at.
import { describe, expect, it } from 'vitest'
import { createDefaultAdapterRegistry } from '../adapters/default-adapters.js'
import { defaultConfig, parseConfig, ProfileSchema } from '../core/config.js'
import type { DetectedAdapter } from '../adapters/detection.js'
import { AppError } from '../core/errors.js'
import { BUILTIN_NO_PROVIDER, BUILTIN_PROVIDER_FIX } from './builtin-model.js'
import { type BuiltinReadiness, builtinReadiness } from './builtin-readiness.js'
import {
  defaultAgentName,
  needsUserProfiles,
  resolveAgent,
  resolveAgentOrDefault,
  userProfilesFor,
} from './resolve-agent.js'

const registry = createDefaultAdapterRegistry()

describe('resolveAgent', () => {
  it('resolves a user profile by name, with its definition', () => {
    const mine = ProfileSchema.parse({ adapter: 'builtin', model: 'claude-mock' })
    const agent = resolveAgent('mine', {
      config: defaultConfig(),
      registry,
      detected: [],
      userProfiles: { mine },
    })
    expect(agent).toMatchObject({ kind: 'builtin', name: 'mine', profile: { model: 'claude-mock' } })
  })

  it('prefers hangar.yaml on a name clash and names the user profiles when nothing matches', () => {
    const config = parseConfig('agents:\n  reviewer: { adapter: builtin, model: from-yaml }\n')
    const reviewer = ProfileSchema.parse({ adapter: 'builtin', model: 'from-user' })
    const context = { config, registry, detected: [], userProfiles: { reviewer, helper: reviewer } }
    expect(resolveAgent('reviewer', context)).toMatchObject({ profile: { model: 'from-yaml' } })
    const refusal = (() => {
      try {
        resolveAgent('nobody', context)
      } catch (error) {
        return error as { message: string; hint?: string }
      }
    })()
    expect(refusal?.message).toBe('unknown agent "nobody"')
    expect(refusal?.hint).toContain('a profile (reviewer, helper)')
    // The built-in agent is a valid name too (issue 20 item 3).
    expect(refusal?.hint).toMatch(/an adapter id: claude-code, .*, builtin$/)
  })
})

// Issue 20 item 3: on a fresh install the built-in agent was the default and "ready" with no provider, and
// the first message failed. The default is one that can run; when none can, the error says how to fix it.
describe('defaultAgentName', () => {
  const cli = (id: string, auth: DetectedAdapter['auth']['state']) =>
    ({
      id,
      installed: true,
      executable: { path: `/bin/${id}` },
      problem: null,
      auth: { state: auth },
    }) as DetectedAdapter
  const ready: BuiltinReadiness = { ready: true, provider: 'anthropic', model: 'm', reason: 'env' }
  const notReady: BuiltinReadiness = { ready: false, problem: 'needs a provider', fix: BUILTIN_PROVIDER_FIX }
  const choose = (detected: DetectedAdapter[], builtin: BuiltinReadiness, config = defaultConfig()) =>
    defaultAgentName({ config, detected, builtinReadiness: async () => builtin })

  it('prefers a signed-in CLI, then a ready built-in agent, then a CLI whose sign-in is unknown', async () => {
    expect(await choose([cli('opencode', 'unknown'), cli('codex', 'ok')], notReady)).toBe('codex')
    expect(await choose([cli('claude-code', 'missing'), cli('opencode', 'unknown')], ready)).toBe('builtin')
    expect(await choose([cli('claude-code', 'missing'), cli('opencode', 'unknown')], notReady)).toBe(
      'opencode',
    )
    // The operator's choice stands.
    expect(await choose([], notReady, parseConfig('defaultAgent: codex\n'))).toBe('codex')
  })

  it('never picks a built-in agent that needs a provider: the error says how to fix it', async () => {
    const refusal = await choose([cli('claude-code', 'missing')], notReady).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(AppError)
    expect((refusal as AppError).message).toContain('no agent can run here')
    expect((refusal as AppError).hint).toContain('Settings → Providers')
    expect((refusal as AppError).hint).toContain("in the daemon's environment")
    const context = {
      config: defaultConfig(),
      registry,
      detected: [],
      builtinReadiness: async () => notReady,
    }
    await expect(resolveAgentOrDefault(undefined, context)).rejects.toThrow('no agent can run here')
    // Naming the built-in agent is still allowed: its run says what it needs.
    await expect(resolveAgentOrDefault('builtin', context)).resolves.toMatchObject({ kind: 'builtin' })
  })
})

describe('builtinReadiness', () => {
  it('is ready with the provider a run would use, and needs a provider when the resolution refuses', async () => {
    expect(
      await builtinReadiness(async () => ({
        provider: 'anthropic',
        model: 'claude-x',
        reason: 'your default',
      })),
    ).toEqual({ ready: true, provider: 'anthropic', model: 'claude-x', reason: 'your default' })
    expect(
      await builtinReadiness(async () => {
        throw new AppError('unavailable', BUILTIN_NO_PROVIDER, { hint: 'whatever' })
      }),
    ).toEqual({ ready: false, problem: 'needs a provider', fix: BUILTIN_PROVIDER_FIX })
    expect(
      await builtinReadiness(async () => {
        throw new AppError('unavailable', 'no API key for provider "openai"', { hint: 'set OPENAI_API_KEY' })
      }),
    ).toEqual({
      ready: false,
      problem: 'needs a provider',
      fix: 'no API key for provider "openai": set OPENAI_API_KEY',
    })
  })
})

// Every run used to read the user's profiles from the store three times (submit, scheduling pass, start),
// even for a hangar.yaml profile or an adapter id, which no user profile can stand for.
describe('userProfilesFor', () => {
  const counting = () => {
    let reads = 0
    const store = {
      forUser: () => ({
        profiles: {
          list: async () => {
            reads++
            return [{ name: 'mine', definition: { adapter: 'builtin' } }]
          },
        },
      }),
    } as unknown as Parameters<typeof userProfilesFor>[2]
    return { store, reads: () => reads }
  }

  it('reads no profile for a hangar.yaml profile or an adapter id', async () => {
    const config = parseConfig('agents:\n  reviewer: { adapter: codex }\n')
    const { store, reads } = counting()
    for (const name of ['reviewer', 'codex', 'builtin'])
      expect(Object.keys(await userProfilesFor(name, config, store, 'user'))).toEqual([])
    expect(needsUserProfiles('reviewer', config)).toBe(false)
    expect(reads()).toBe(0)
  })

  it('reads them for any other name, and when no agent is named (defaultAgent may name one)', async () => {
    const { store, reads } = counting()
    expect(Object.keys(await userProfilesFor('mine', defaultConfig(), store, 'user'))).toEqual(['mine'])
    expect(Object.keys(await userProfilesFor(undefined, defaultConfig(), store, 'user'))).toEqual(['mine'])
    expect(reads()).toBe(2)
  })
})
