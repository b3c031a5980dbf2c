// What the REST API answers, as the UI reads it. Event and config types come from src/core (type-only:
// nothing of the daemon is bundled); the few shapes core does not hold mirror src/server/routes.
import type {
  AdapterCapabilities,
  Conversation as CoreConversation,
  PendingAction as CorePendingAction,
  Run as CoreRun,
  UsageReport,
} from '../../../src/core/api-types'
import type { ProfileConfig } from '../../../src/core/config'
import type { PermissionsInfo } from '../../../src/core/permissions'
import type { WorkspaceLifecycleConfig } from '../../../src/core/workspace-lifecycle-schema'
import type { FieldError } from './field-errors'

export type { BudgetStatus, UsageGroup, UsageNumbers, UsageReport } from '../../../src/core/api-types'
export type { RunStatus, UsageTotals, WriteClassification } from '../../../src/core/events'
export type Capabilities = AdapterCapabilities

/** What a project-aware daemon adds to each: the project it belongs to (null = none, absent = older daemon). */
interface InProject {
  projectId?: string | null
}
export type Conversation = CoreConversation & InProject
export type Run = CoreRun & InProject
export type PendingAction = CorePendingAction & InProject

/** A project of the daemon: a folder (or git checkout) agents work in. GET/POST/PATCH /api/projects. */
export interface Project {
  id: string
  name: string
  path: string
  kind: 'git' | 'folder'
  defaultAgent: string | null
  createdAt: string
  /** User ids the owner granted it to (shown to the owner). */
  members?: string[]
}

/** A repository's committed `.hangar/workspace.yaml`, as GET /api/workspace-config shows it. */
export interface RepositoryLifecycleFile {
  path: string
  /** SHA-256 of the file: what approving it names, so what runs is what the owner read. */
  contentHash: string
  approved: boolean
  approvedAt: string | null
  config: WorkspaceLifecycleConfig | null
  /** Why it does not parse, or null. */
  problem: string | null
}

/** GET /api/workspace-config: mirrors ResolvedLifecycle (src/workspaces/lifecycle/lifecycle-config.ts). */
export interface WorkspaceLifecycle {
  project: string
  source: 'hangar.yaml' | 'repository' | 'none'
  config: WorkspaceLifecycleConfig | null
  repositoryFile: RepositoryLifecycleFile | null
}
export type { WorkspaceLifecycleConfig }

export interface ProjectsResponse {
  projects: Project[]
}
export type UsageResponse = UsageReport
export type ProfileDefinition = ProfileConfig

export interface AdapterInfo {
  id: string
  displayName: string
  installed: boolean
  verified: boolean
  version?: string | null
  path?: string | null
  auth?: { state: 'ok' | 'missing' | 'expired' | 'unknown'; source?: string; hint?: string }
  problem?: string | null
  /** The semver range of CLI versions the adapter was tested with. */
  testedVersions?: string | null
  /** Set when the detected version is outside `testedVersions`. */
  versionWarning?: string | null
  capabilities: Capabilities
  /** The default permission mode and what each mode becomes for this CLI. */
  permissions?: PermissionsInfo
  /** The built-in agent only: it can reach a model (else `problem` is "needs a provider"). */
  ready?: boolean
}

export interface AgentsResponse {
  adapters: AdapterInfo[]
  /** What a request naming no agent gets: one that can run; null when none can. */
  defaultAgent?: string | null
  /** Why no agent can run and how to fix it, when none can. */
  noDefault?: string | null
  /** Whether bubblewrap can confine runs on the daemon's host (`sandbox: workspace`), and why not. */
  sandbox?: { available: boolean; by?: string; reason?: string }
}

export interface Profile {
  name: string
  source: 'config' | 'user'
  definition: ProfileDefinition
  /** Whether its runs are sandboxed (its own setting, else the project's default, else off). */
  sandboxMode?: 'off' | 'workspace'
  updatedAt?: string
  /**
   * What the daemon finds wrong with a profile now (e.g. a service removed from hangar.yaml), and its
   * warnings (`severity: 'warning'`, e.g. feeds with proxy: false), which refuse nothing.
   */
  issues?: FieldError[]
}

export interface ConversationDetail extends Conversation {
  runs: Run[]
  /** Agents to try after a failed run, best first; offered, never applied by the server. */
  fallback: string[] | null
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
  /** Why the proxy never fetches it (a path outside what the service allows this profile). */
  refused?: string
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

/** GET/PUT /api/settings/builtin: the user's default for the built-in agent and what it will use. */
export interface BuiltinSettings {
  provider: string | null
  model: string | null
  effective: {
    provider: string
    model: string
    source: 'profile' | 'user' | 'operator' | 'environment'
    reason: string
  } | null
  problem: string | null
}
