// What the REST API answers, as the UI reads it. Event and config types come from src/core (type-only:
// nothing of the daemon is bundled); the rest mirrors the JSON of the routes in src/server/routes.
import type { ProfileConfig } from '../../../src/core/config'
import type { RunStatus, UsageTotals, WriteClassification } from '../../../src/core/events'

export type { RunStatus, UsageTotals, WriteClassification }
export type ProfileDefinition = ProfileConfig

export interface Capabilities {
  streaming: boolean
  resume: boolean
  surgicalEdit: boolean
  nativeSkillLoading: boolean
  permissionMode: boolean
  contextWindowHint: number | null
}

export interface AdapterInfo {
  id: string
  displayName: string
  installed: boolean
  verified: boolean
  version?: string | null
  path?: string | null
  auth?: { state: 'ok' | 'missing' | 'expired' | 'unknown'; source?: string; hint?: string }
  problem?: string | null
  capabilities: Capabilities
}

export interface AgentsResponse {
  adapters: AdapterInfo[]
}

export interface Profile {
  name: string
  source: 'config' | 'user'
  definition: ProfileDefinition
  updatedAt?: string
}

export interface Run {
  id: string
  conversationId: string | null
  agent: string
  adapter: string
  model: string | null
  prompt: string
  cwd: string
  status: RunStatus
  reason: string | null
  continues: string | null
  dependsOn: string[]
  sessionId: string | null
  usage: UsageTotals | null
  costUsd: number | null
  workspaceFinalize: 'ok' | 'failed' | null
  finalizeReason: string | null
  createdAt: string
  startedAt: string | null
  endedAt: string | null
}

export interface Conversation {
  id: string
  title: string
  profile: string
  project: string
  workspaceId: string | null
  status: string
  createdAt: string
  updatedAt: string
}

export interface ConversationDetail extends Conversation {
  runs: Run[]
  /** Agents to try after a failed run, best first; offered, never applied by the server. */
  fallback: string[] | null
}

export interface PendingAction {
  id: string
  runId: string | null
  conversationId: string | null
  tool: string
  summary: string
  diff: string | null
  classification: WriteClassification
  origin: 'chat' | 'mcp'
  status: string
  decisionReason: string | null
  createdAt: string
  expiresAt: string
  decidedAt: string | null
}

export interface ProviderSettings {
  provider: string
  keyConfigured: boolean
  keyLast4: string | null
  model: string | null
  baseUrl: string | null
  updatedAt: string | null
}

export interface AccessToken {
  id: string
  name: string
  kind: 'api' | 'proxy'
  scopes: string[]
  profile: string | null
  createdAt: string
  expiresAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

export interface FeedState {
  name: string
  source: string
  path: string
  ttl: number
  url: string
  state: {
    status: 'fresh' | 'stale' | 'unavailable' | 'never' | string
    lastSuccessAt?: string
    lastAttemptAt?: string
    expiresAt?: string
    reason?: string
  }
}

export interface Workspace {
  id: string
  kind?: string
  path?: string
  branch?: string | null
  status?: string
  conversationId?: string | null
}

export interface UsageNumbers {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  costUsd: number
  requests: number
  runs: number
}

export interface UsageGroup extends UsageNumbers {
  key: string
  byAgent?: Record<string, { costUsd: number; tokens: number }>
}

export interface BudgetStatus {
  profile: string
  usd: number
  window: string
  since: string
  spentUsd: number
  fraction: number
}

export interface UsageResponse {
  from: string
  to: string
  groupBy: 'day' | 'agent'
  total: UsageNumbers
  groups: UsageGroup[]
  budgets: BudgetStatus[]
}
