// The agents a person can pick: profiles (from hangar.yaml and made in the UI) and bare adapters, each with
// the capabilities of the adapter behind it and whether it can run here now.
import { useMemo } from 'react'
import { api } from './api'
import type { AdapterInfo, AgentsResponse, Capabilities, Profile } from './types'
import { useResource } from './use-resource'

export interface AgentChoice {
  /** What POST /api/conversations and messages take as `agent`. */
  name: string
  label: string
  adapter: AdapterInfo | undefined
  capabilities: Capabilities | undefined
  /** Why it cannot run now; undefined when it can. */
  unavailable: string | undefined
  /** How to make it run, when it cannot (a sign-in, the built-in agent's provider). */
  fix: string | undefined
  kind: 'profile' | 'adapter'
}

export function adapterProblem(adapter: AdapterInfo | undefined): string | undefined {
  if (!adapter) return 'unknown adapter'
  // "needs a provider" until it can reach a model (the daemon decides, as for a run).
  if (adapter.id === 'builtin') return adapter.problem ?? undefined
  if (!adapter.installed) return 'not installed'
  if (adapter.problem) return adapter.problem
  if (adapter.auth?.state === 'missing') return 'not signed in'
  if (adapter.auth?.state === 'expired') return 'sign-in expired'
  return undefined
}

/** How to make an agent that cannot run usable: its sign-in hint (the built-in agent's provider fix). */
function fixOf(adapter: AdapterInfo | undefined): string | undefined {
  if (!adapter || adapterProblem(adapter) === undefined) return undefined
  return adapter.auth?.state !== 'ok' ? adapter.auth?.hint : undefined
}

export function useAgents() {
  const agents = useResource<AgentsResponse>('/api/agents')
  const profiles = useResource<Profile[]>('/api/profiles')
  const choices = useMemo<AgentChoice[]>(() => {
    const adapters = agents.data?.adapters ?? []
    const byId = new Map(adapters.map((adapter) => [adapter.id, adapter]))
    const fromProfiles = (profiles.data ?? []).map((profile): AgentChoice => {
      const adapter = byId.get(profile.definition.adapter)
      return {
        name: profile.name,
        label: `${profile.name} (${adapter?.displayName ?? profile.definition.adapter})`,
        adapter,
        capabilities: adapter?.capabilities,
        unavailable: adapterProblem(adapter),
        fix: fixOf(adapter),
        kind: 'profile',
      }
    })
    const fromAdapters = adapters.map((adapter): AgentChoice => ({
      name: adapter.id,
      label: adapter.displayName,
      adapter,
      capabilities: adapter.capabilities,
      unavailable: adapterProblem(adapter),
      fix: fixOf(adapter),
      kind: 'adapter',
    }))
    return [...fromProfiles, ...fromAdapters]
  }, [agents.data, profiles.data])
  return {
    choices,
    adapters: agents.data?.adapters ?? [],
    /** The agent to preselect: the daemon's default, one that can run (undefined while loading or when none can). */
    defaultAgent: agents.data?.defaultAgent ?? undefined,
    /** Why no agent can run, and how to fix it. */
    noDefault: agents.data?.noDefault ?? undefined,
    sandbox: agents.data?.sandbox,
    profiles: profiles.data ?? [],
    loading: agents.loading || profiles.loading,
    error: agents.error ?? profiles.error,
    reload: async () => {
      await Promise.all([agents.reload(), profiles.reload()])
    },
    /** Detects the CLIs again (one installed or signed in since), then reloads. */
    refresh: async () => {
      await api('GET', '/api/agents?refresh=1')
      await Promise.all([agents.reload(), profiles.reload()])
    },
  }
}
