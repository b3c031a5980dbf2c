// The versioned event protocol every adapter, the built-in agent and the proxy speak. Events are stored
// in run_events, sent over SSE as `data:` and printed by `hangar run --json`, always in the envelope form.

export const PROTOCOL_VERSION = 1 as const

export const RUN_STATUSES = [
  'queued',
  'preparing',
  'running',
  'finalizing',
  'awaiting_confirmation',
  'succeeded',
  'failed',
  'cancelled',
  'interrupted',
] as const
export type RunStatus = (typeof RUN_STATUSES)[number]

/** The five statuses that end a run and emit `run-end`. */
export const TERMINAL_RUN_STATUSES = [
  'succeeded',
  'failed',
  'cancelled',
  'interrupted',
  'awaiting_confirmation',
] as const satisfies readonly RunStatus[]
export type TerminalRunStatus = (typeof TERMINAL_RUN_STATUSES)[number]

export function isTerminalRunStatus(status: string): status is TerminalRunStatus {
  return (TERMINAL_RUN_STATUSES as readonly string[]).includes(status)
}

export const WRITE_CLASSIFICATIONS = [
  'safe_create',
  'safe_update',
  'destructive_update',
  'destructive_delete',
] as const
export type WriteClassification = (typeof WRITE_CLASSIFICATIONS)[number]

/**
 * Where a run's cost comes from: `proxy` (metered by Hangar's proxy: the provider's own figure or the list
 * price of every request), `agent` (the agent's own report, e.g. Claude's total_cost_usd, used when the
 * proxy could not price a request or did not see the run), `unknown` (neither; never shown as $0).
 */
export const COST_SOURCES = ['proxy', 'agent', 'unknown'] as const
export type CostSource = (typeof COST_SOURCES)[number]

export interface UsageTotals {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  costUsd?: number
  /** A run's totals say where costUsd came from (absent on per-request usage events). */
  costSource?: CostSource
}

export interface RunStartEvent {
  type: 'run-start'
  agent: string
  adapter: string
  /** The model provider, where Hangar chose it (the built-in agent). */
  provider?: string
  model?: string
  cwd: string
  proxied: boolean
  /** Skills given to the agent and how they reached it (its native folder, an instruction file, the prompt). */
  skills?: { strategy: 'native' | 'file' | 'prompt'; names: string[] }
  /** What confined the agent (`workspace`: bubblewrap), or `off` and why (src/sandbox/). */
  sandbox?: RunSandbox
}
/** A run's sandbox: `by` names what confined it; `reason` says why a run is not sandboxed. */
export type RunSandbox = { mode: 'workspace'; by: string; hosts?: string[] } | { mode: 'off'; reason: string }
/**
 * Said or done by a sub-agent: `parentId` is the `toolCallId` of the tool call that started it (Claude
 * Code's Task/Agent tool), so a transcript can fold the sub-task under that call.
 */
export interface SubtaskScoped {
  parentId?: string
}
export interface TextDeltaEvent extends SubtaskScoped {
  type: 'text-delta'
  text: string
}
export interface ReasoningDeltaEvent extends SubtaskScoped {
  type: 'reasoning-delta'
  text: string
}
export interface ToolCallEvent extends SubtaskScoped {
  type: 'tool-call'
  toolCallId: string
  name: string
  input: unknown
}
export interface ToolResultEvent extends SubtaskScoped {
  type: 'tool-result'
  toolCallId: string
  output: unknown
  isError: boolean
}
export interface FileChangeEvent extends SubtaskScoped {
  type: 'file-change'
  /** Relative to the workspace root. */
  path: string
  kind: 'create' | 'modify' | 'delete'
  diff?: string
}
export interface ApprovalRequiredEvent {
  type: 'approval-required'
  actionId: string
  tool: string
  summary: string
  classification: WriteClassification
  diff?: string
  expiresAt: string
}
export interface UsageEvent extends UsageTotals {
  type: 'usage'
  source: 'proxy' | 'agent'
  model?: string
}
export interface ErrorEvent {
  type: 'error'
  code: string
  message: string
  retryable: boolean
}
/**
 * `error` codes that report something to know while nothing failed (the run goes on): the CLI and the web
 * UI show them as warnings, not errors.
 */
export const WARNING_ERROR_CODES: readonly string[] = [
  'agent_warning',
  'output_unrecognized',
  'feeds_not_delivered',
  'workspace_config_unapproved',
  // A `sandbox: workspace` run on an SSH target whose host cannot confine it: it runs, unsandboxed.
  'sandbox_off_on_host',
]

export function isWarningEvent(event: Pick<ErrorEvent, 'code'>): boolean {
  return WARNING_ERROR_CODES.includes(event.code)
}

export interface RawEvent {
  type: 'raw'
  stream: 'stdout' | 'stderr'
  /** An upstream line we did not understand; never dropped silently. */
  value: string
}
export interface RunEndEvent {
  type: 'run-end'
  status: TerminalRunStatus
  reason?: string
  sessionId?: string
  usage?: UsageTotals
}

/**
 * A workspace finalize that ended after the run did (`hangar runs finalize`, or start-up recovery of a
 * run whose process died): the changes came back (`ok`) or not. `status` is the run's status now, so the
 * log says what GET /api/runs/:id says.
 */
export interface FinalizeEndEvent {
  type: 'finalize-end'
  finalize: 'ok' | 'failed'
  status: TerminalRunStatus
  reason?: string
}

/**
 * What a run was handed of its conversation that its agent had not seen (other agents' turns), right
 * after `run-start`: `new-session` and `since-last` (a resumed session) went into a CLI agent's prompt,
 * `history` into the built-in agent's messages. `runs` are the turns handed over, oldest first; over the
 * bound (`budgetChars`, from the adapter's context window) the oldest were `summarised` (cut short) or
 * `omitted`. Only the sizes are recorded: the text itself is what the agent received.
 */
export interface HandoffEvent {
  type: 'handoff'
  mode: 'new-session' | 'since-last' | 'history'
  runs: string[]
  chars: number
  budgetChars: number
  summarised: number
  omitted: number
}

/**
 * The workspace's setup command (its project's workspace lifecycle) starting before the agent's first
 * turn: `target` is `local` or the SSH target it runs on.
 */
export interface WorkspaceSetupStartEvent {
  type: 'workspace-setup-start'
  command: string
  target: string
}
/** Output of the setup command, as it came. */
export interface WorkspaceSetupDeltaEvent {
  type: 'workspace-setup-delta'
  stream: 'stdout' | 'stderr'
  text: string
}
/** The setup command ended; a failure (non-zero `exitCode`) fails the run, and the next run retries it. */
export interface WorkspaceSetupEndEvent {
  type: 'workspace-setup-end'
  status: 'succeeded' | 'failed'
  exitCode: number
}

/**
 * One attempt of a compared group (POST /api/attempts) is done: its agent's run ended and its project's
 * check command ran in its workspace (`checkExitCode` null: no check, or it did not run). Appended to the
 * attempt's run after its run-end, so it reaches the conversation's stream and /api/activity.
 */
export interface AttemptFinishedEvent {
  type: 'attempt-finished'
  attemptId: string
  conversationId: string
  status: TerminalRunStatus
  checkStatus: 'passed' | 'failed' | 'skipped' | 'none'
  checkExitCode: number | null
}

/**
 * A conversation's workspace was landed into a branch of the user's repository (POST
 * /api/workspaces/:id/land), appended to the conversation's last run like `finalize-end`.
 */
export interface WorkspaceLandedEvent {
  type: 'workspace-landed'
  workspaceId: string
  into: string
  strategy: 'merge' | 'squash' | 'rebase'
  /** The branch's head before and after. */
  previous: string
  commit: string
  files: number
  removed: boolean
}

export type AgentEvent =
  | RunStartEvent
  | HandoffEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | ToolCallEvent
  | ToolResultEvent
  | FileChangeEvent
  | ApprovalRequiredEvent
  | UsageEvent
  | ErrorEvent
  | RawEvent
  | RunEndEvent
  | FinalizeEndEvent
  | WorkspaceSetupStartEvent
  | WorkspaceSetupDeltaEvent
  | WorkspaceSetupEndEvent
  | AttemptFinishedEvent
  | WorkspaceLandedEvent

export type AgentEventType = AgentEvent['type']

export const AGENT_EVENT_TYPES = [
  'run-start',
  'handoff',
  'text-delta',
  'reasoning-delta',
  'tool-call',
  'tool-result',
  'file-change',
  'approval-required',
  'usage',
  'error',
  'raw',
  'run-end',
  'finalize-end',
  'workspace-setup-start',
  'workspace-setup-delta',
  'workspace-setup-end',
  'attempt-finished',
  'workspace-landed',
] as const satisfies readonly AgentEventType[]

/** An event as stored and delivered: `seq` is dense per run, `ts` is ISO-8601 UTC. */
export type EventEnvelope<E extends AgentEvent = AgentEvent> = E & {
  v: typeof PROTOCOL_VERSION
  runId: string
  seq: number
  ts: string
}
