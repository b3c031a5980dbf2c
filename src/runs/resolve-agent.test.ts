// A profile made in the UI or over the API is an agent like one of hangar.yaml: it used to be refused as
// "unknown agent" because only hangar.yaml's profiles were looked at.
import { describe, expect, it } from 'vitest'
import { createDefaultAdapterRegistry } from '../adapters/default-adapters.js'
import { defaultConfig, parseConfig, ProfileSchema } from '../core/config.js'
import { resolveAgent } from './resolve-agent.js'

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
  })
})
