// The JSON the REST API answers with, for the server that writes it and every client that reads it (the
// web UI imports these; it may import nothing else of ours but src/core). Pure types: no I/O, no schema.
import type { CostSource, RunStatus, UsageTotals, WriteClassification } from './events.js'
import type { PermissionEnforcement } from './permissions.js'

/** What an adapter can do; the web UI shows and hides features by these. */
export interface AdapterCapabilities {
  /** Token-level (or at least event-level) output while the run goes; false = one result at the end. */
  streaming: boolean
  /** Can continue its own earlier session. */
  resume: boolean
  /** Edits files by patch/replace rather than rewriting them whole. */
  surgicalEdit: boolean
  /** Loads skills from a folder in the workspace by itself. */
  nativeSkillLoading: boolean
  /**
   * What a profile's `permissions` can hold it to: `strict` (every mode), `permissive` (it cannot be made
   * read-only) or `none` (no permission setting reaches it). See src/core/permissions.ts.
   */
  permissionMode: PermissionEnforcement
  /** Typical context window of its default model, in tokens, when known. */
  contextWindowHint: number | null
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
  owner: { node: string | null; pid: number | null; bootId: string | null }
  /** The node whose files it needs (its conversation's workspace); only that node runs it. */
  pinnedNode: string | null
  /** The agent CLI's process group (= its pid), for reaping. */
  agentPgid: number | null
  sessionId: string | null
  usage: UsageTotals | null
  costUsd: number | null
  /** `pending`: shipped to an SSH target and not brought back yet (running, or its process died). */
  /** The project it works on (its conversation's, or the one holding its directory); may be removed. */
  projectId: string | null
  workspaceFinalize: 'ok' | 'failed' | 'pending' | null
  finalizeReason: string | null
  /** The status the agent reached, while a failed finalize holds the run `failed`. */
  agentStatus: RunStatus | null
  /** What a retried finalize needs (the SSH sync state); opaque to the store. */
  workspaceSync: unknown
  createdAt: string
  startedAt: string | null
  endedAt: string | null
}

/**
 * A directory on the daemon's host that conversations and runs work on: a git repository (each
 * conversation gets a worktree of it) or a plain folder (each conversation gets a copy).
 */
export interface Project {
  /** `prj_…` */
  id: string
  /** Unique; letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 64. */
  name: string
  /** Its real path on the daemon's host. */
  path: string
  kind: 'git' | 'folder'
  /** The agent its conversations start with when none is named; null: the instance default. */
  defaultAgent: string | null
  /**
   * The check command of its attempts (`npm test`), run in each attempt's workspace after its agent
   * finished; null: none set here (hangar.yaml's `projects.<name>.check` may still name one).
   */
  check: string | null
  createdAt: string
  /** The user ids it is granted to (the owner's view only). */
  members?: string[]
}

export type ConversationStatus = 'idle' | 'running' | 'awaiting_confirmation'

export interface Conversation {
  id: string
  title: string
  profile: string
  /** The project's name when the conversation was made (the daemon's directory before projects). */
  project: string
  /** The project it works on; null: made before projects existed. May name a removed project. */
  projectId: string | null
  workspaceId: string | null
  /** The branch or commit its workspace starts from (`baseRef` on create); null: the project's HEAD. */
  baseRef?: string | null
  status: ConversationStatus
  createdAt: string
  updatedAt: string
}

/** `applying`: confirmed and being applied now (a command may run for minutes); then one of the others. */
export type ActionStatus =
  'pending' | 'applying' | 'applied' | 'rejected' | 'expired' | 'conflict' | 'failed' | 'superseded'

export interface PendingAction {
  id: string
  runId: string | null
  conversationId: string | null
  /** The project whose file it changes (`precondition.path` is relative to that project's workspace). */
  projectId: string | null
  tool: string
  toolCallId: string | null
  input: unknown
  inputHash: string
  summary: string
  diff: string | null
  classification: WriteClassification
  origin: 'chat' | 'mcp'
  status: ActionStatus
  decisionReason: string | null
  result: unknown
  precondition: { path: string; sha256: string | null } | null
  createdAt: string
  expiresAt: string
  decidedAt: string | null
}

/** Tokens, cost and counts of one group of GET /api/usage (or its total). */
export interface UsageNumbers {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  /** The priced part (metered by the proxy, or reported by the agent); 0 when nothing was priced. */
  costUsd: number
  /** The part of costUsd that agents reported themselves (the proxy had no price for their model). */
  agentCostUsd: number
  /** Requests (and unproxied runs) whose cost is unknown: in no sum, shown as "unknown", never $0. */
  unpriced: number
  /** Model requests the proxy metered. */
  requests: number
  runs: number
}

export interface UsageGroup extends UsageNumbers {
  /** YYYY-MM-DD (UTC) with groupBy=day, else the agent. */
  key: string
  /** groupBy=day: each agent's share of that day. */
  byAgent?: Record<string, { costUsd: number; tokens: number }>
}

/** A profile's budget (`budget: { usd, window }`) and what the proxy metered against it. */
export interface BudgetStatus {
  profile: string
  usd: number
  window: string
  /** Start of the window (ISO-8601): what the proxy metered since then counts. */
  since: string
  spentUsd: number
  /** spentUsd / usd: 1 or more means spent. */
  fraction: number
}

/** GET /api/usage. */
export interface UsageReport {
  from: string
  to: string
  groupBy: 'day' | 'agent'
  total: UsageNumbers
  groups: UsageGroup[]
  budgets: BudgetStatus[]
}

/** Where an attempt's check stands: `none` — the project declares no check command. */
export type AttemptCheckStatus = 'pending' | 'running' | 'passed' | 'failed' | 'skipped' | 'none'

/** One agent's attempt of a compared group, as GET /api/attempts/:id shows it side by side. */
export interface Attempt {
  /** The attempt's own conversation (and worktree): what POST /api/attempts/:id/pick names. */
  conversationId: string
  agent: string
  runId: string | null
  workspaceId: string | null
  /** Its run's status while it goes; `checking` while the check command runs. */
  status: RunStatus | 'checking'
  /** The run ended and its check (if any) ran. */
  finished: boolean
  durationMs: number | null
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number } | null
  costUsd: number | null
  costSource: CostSource
  filesChanged: number | null
  additions: number | null
  deletions: number | null
  check: {
    command: string | null
    status: AttemptCheckStatus
    exitCode: number | null
    /** The command's output (stdout and stderr as they came), its last 64 KiB. */
    output: string | null
  }
  picked: boolean
  /** When its workspace was removed because another attempt was picked. */
  discardedAt: string | null
}

/** One prompt started with several agents in one project (POST /api/attempts). */
export interface AttemptGroup {
  /** `atg_…` */
  id: string
  projectId: string
  prompt: string
  baseRef: string | null
  createdAt: string
  /** Every attempt finished (run ended, check ran). */
  finished: boolean
  pickedConversationId: string | null
  pickedAt: string | null
  attempts: Attempt[]
}
