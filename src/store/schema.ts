// Row types of every table, shared by both engines. Conventions (one migration set for SQLite and
// PostgreSQL): TEXT ids minted in the app, ISO-8601 UTC timestamps as TEXT, JSON as TEXT, booleans as
// INTEGER 0/1, CHECK constraints instead of enums.

export interface UsersTable {
  id: string
  name: string
  role: 'owner' | 'member'
  created_at: string
  disabled_at: string | null
}

export interface PersonalAccessTokensTable {
  id: string
  user_id: string
  name: string
  kind: 'user' | 'proxy'
  /** JSON array of scopes: `api`, `approve`. */
  scopes: string
  /** For proxy tokens: the profile whose usage they are recorded against. */
  profile: string | null
  /** For a run's proxy token: the run (the token ends with it). */
  run_id: string | null
  secret_hash: string
  created_at: string
  expires_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export interface SessionsTable {
  id: string
  user_id: string
  kind: 'browser' | 'cli'
  secret_hash: string
  created_at: string
  expires_at: string
  last_seen_at: string | null
  revoked_at: string | null
}

export interface LoginLinksTable {
  id: string
  user_id: string
  purpose: 'login' | 'invite'
  secret_hash: string
  created_at: string
  expires_at: string
  used_at: string | null
}

export interface ProviderCredentialsTable {
  id: string
  user_id: string
  provider: string
  /** Vault envelope of the API key, or null for a keyless provider. */
  key_envelope: string | null
  key_last4: string | null
  model: string | null
  base_url: string | null
  created_at: string
  updated_at: string
}

/** The built-in agent's default provider and model of one user. */
export interface BuiltinSettingsTable {
  user_id: string
  provider: string
  model: string | null
  updated_at: string
}

export interface AgentProfilesTable {
  id: string
  user_id: string
  name: string
  /** JSON of the profile (the same shape as a hangar.yaml `agents.<name>` entry). */
  definition: string
  created_at: string
  updated_at: string
}

export interface ConversationsTable {
  id: string
  user_id: string
  title: string
  profile: string
  project: string
  workspace_id: string | null
  /** The project it works on; may name a removed project. Null: made before projects (the daemon's). */
  project_id: string | null
  /** The ref its workspace starts from (`baseRef` on create), checked then; null: the project's HEAD. */
  base_ref?: string | null
  status: 'idle' | 'running' | 'awaiting_confirmation'
  created_at: string
  updated_at: string
}

export interface MessagesTable {
  id: string
  conversation_id: string
  user_id: string
  seq: number
  role: 'user' | 'assistant' | 'tool'
  /** JSON of the normalized message (core/messages.ts). */
  content: string
  tool_call_id: string | null
  run_id: string | null
  created_at: string
}

export interface RunsTable {
  id: string
  user_id: string
  conversation_id: string | null
  agent: string
  adapter: string
  model: string | null
  prompt: string
  cwd: string
  status: string
  reason: string | null
  /** The run this one continues after a confirmation. */
  continues: string | null
  /** JSON array of run ids. */
  depends_on: string
  owner_node: string | null
  /** The only node that may claim it (it needs that machine's files); null: any node. */
  pinned_node: string | null
  owner_pid: number | null
  owner_boot_id: string | null
  /** The agent CLI's process group, while it runs. */
  agent_pgid: number | null
  session_id: string | null
  /** JSON of UsageTotals, or null. */
  usage: string | null
  cost_usd: number | null
  workspace_finalize: 'ok' | 'failed' | null
  finalize_reason: string | null
  /** The status the agent itself reached, kept while a failed finalize holds the run `failed`. */
  agent_status: string | null
  /** JSON of what a retried finalize needs (the SSH sync state), or null. */
  workspace_sync: string | null
  /** The project it works on (its conversation's, or the one holding its directory), or null. */
  project_id: string | null
  created_at: string
  started_at: string | null
  ended_at: string | null
}

export interface RunEventsTable {
  run_id: string
  seq: number
  ts: string
  type: string
  /** JSON of the event fields (without the envelope). */
  data: string
}

export interface PendingActionsTable {
  id: string
  user_id: string
  run_id: string | null
  conversation_id: string | null
  tool: string
  tool_call_id: string | null
  /** JSON of the tool input, kept server-side. */
  input: string
  input_hash: string
  summary: string
  diff: string | null
  classification: string
  origin: 'chat' | 'mcp'
  status: string
  decision_reason: string | null
  /** JSON of the outcome (tool result), once decided. */
  result: string | null
  /** JSON of what must still hold at apply time (`{ path, sha256 }`), or null. */
  precondition: string | null
  created_at: string
  expires_at: string
  decided_at: string | null
  /** The audit actor of the decision (`user:<id>`, `pat:<id>`, `system`), once decided. */
  decided_by: string | null
  /** While `applying`: the process applying it (node, pid, boot id), as a run's owner. */
  applying_node: string | null
  applying_pid: number | null
  applying_boot_id: string | null
  /** While `applying` a command: its process group, recorded before the command starts. */
  apply_pgid: number | null
  /** The project whose file it changes (its conversation's or run's), or null. */
  project_id: string | null
}

export interface AuditEventsTable {
  id: string
  user_id: string
  /** Who did it: `user:<id>`, `pat:<id>`, `system`. */
  actor: string
  action: string
  target_type: string | null
  target_id: string | null
  /** JSON details; never secrets. */
  details: string
  created_at: string
}

export interface WorkspacesTable {
  id: string
  user_id: string
  conversation_id: string | null
  kind: 'worktree' | 'copy' | 'in_place'
  path: string
  project_path: string
  branch: string | null
  base_ref: string | null
  /** The branch it was made from (where it lands by default), or null (a commit, a detached HEAD). */
  base_branch?: string | null
  /** While a land of it runs: who claimed it (a random token) and when (a stale claim may be taken). */
  landing_by?: string | null
  landing_at?: string | null
  created_branch: number
  target: string
  node_id: string | null
  status: 'active' | 'removed'
  created_at: string
  updated_at: string
}

/** One model request through the LLM proxy. */
export interface ProxyRequestsTable {
  id: string
  user_id: string
  run_id: string | null
  token_id: string
  profile: string
  family: string
  method: string
  path: string
  model: string | null
  stream: number
  status: number
  /** JSON: what was injected, per feed (name, source, status, bytes, refreshedAt). */
  feeds: string | null
  input_tokens: number
  output_tokens: number
  cache_read_tokens: number
  cache_write_tokens: number
  cost_usd: number | null
  error: string | null
  started_at: string
  duration_ms: number
}

/** What a profile spent through the proxy in one minute (budgets sum these, not every request). */
export interface ProxySpendTable {
  user_id: string
  profile: string
  /** `YYYY-MM-DDTHH:MM` (UTC), the minute of the requests' started_at. */
  minute: string
  cost_usd: number
}

/**
 * What a profile's answered requests (status < 400) used through the proxy in one minute, per run: the usage
 * report sums these, not every request (migration 0022).
 */
export interface ProxyUsageTable {
  user_id: string
  /** `YYYY-MM-DDTHH:MM` (UTC), the minute of the requests' started_at. */
  minute: string
  profile: string
  /** '' for requests of no run (a `hangar env` token). */
  run_id: string
  input_tokens: number
  output_tokens: number
  cache_read_tokens: number
  cache_write_tokens: number
  /** The priced requests' costs, summed. */
  cost_usd: number
  /** How many of `requests` were priced. */
  priced: number
  requests: number
}

/** A daemon sharing this store, and when it last said it was alive. */
export interface NodesTable {
  id: string
  url: string | null
  host: string
  pid: number
  boot_id: string
  version: string
  started_at: string
  heartbeat_at: string
  stopped_at: string | null
}

/** A directory conversations and runs work on; `path` is its real path on the daemon's host. */
export interface ProjectsTable {
  id: string
  name: string
  path: string
  kind: 'git' | 'folder'
  default_agent: string | null
  /** The command run in each attempt's workspace after its agent finished (`npm test`); null: none. */
  check_command?: string | null
  created_at: string
}

/** A member the owner granted a project to (the owner has every project). */
export interface ProjectMembersTable {
  project_id: string
  user_id: string
  created_at: string
}

/** One port held by a live workspace (HANGAR_PORT …); the primary key keeps ports distinct. */
export interface WorkspacePortsTable {
  port: number
  workspace_id: string
  created_at: string
}

/** Where a workspace's setup command ran ('local' or an SSH target's name) and how it ended. */
export interface WorkspaceSetupsTable {
  workspace_id: string
  target: string
  /** Where it ran: the workspace's directory on that host (teardown runs there). */
  dir: string
  status: 'succeeded' | 'failed'
  exit_code: number | null
  /** SHA-256 of the command that ran: a changed command runs again. */
  command_hash: string
  updated_at: string
}

/** A workspace's copy on an SSH target (migration 0017): removed from the host with the workspace. */
export interface WorkspaceHostCopiesTable {
  workspace_id: string
  target: string
  key: string
  remote_root: string
  updated_at: string
}

/** The owner's approval of a project's `.hangar/workspace.yaml`: the SHA-256 of its exact content. */
export interface WorkspaceConfigApprovalsTable {
  project: string
  content_hash: string
  approved_by: string
  approved_at: string
}

/** One "compare attempts" request: a prompt started with several agents in one project. */
export interface AttemptGroupsTable {
  id: string
  user_id: string
  project_id: string
  prompt: string
  base_ref: string | null
  picked_conversation_id: string | null
  picked_at: string | null
  created_at: string
}

/** One agent's attempt of a group: its own conversation (and worktree), check outcome and diff stats. */
export interface AttemptsTable {
  conversation_id: string
  group_id: string
  user_id: string
  position: number
  agent: string
  run_id: string | null
  workspace_id: string | null
  check_command: string | null
  check_status: 'pending' | 'running' | 'passed' | 'failed' | 'skipped' | 'none'
  check_exit_code: number | null
  check_output: string | null
  files_changed: number | null
  additions: number | null
  deletions: number | null
  finished_at: string | null
  discarded_at: string | null
}

/** A schedule or an inbound webhook that starts runs as `user_id` (migration 0016). */
export interface TriggersTable {
  id: string
  user_id: string
  name: string
  kind: 'schedule' | 'webhook'
  cron: string | null
  timezone: string | null
  missed: 'skip' | 'once'
  project_id: string | null
  agent: string | null
  /** The prompt, a template over a webhook's payload. */
  prompt: string
  conversation_id: string | null
  /** JSON of the delivery filter, or null. */
  filter: string | null
  /** JSON of where the report goes when a fired run ends, or null. */
  report: string | null
  /** The webhook secret as a vault envelope, or null. */
  secret: string | null
  created_at: string
}

/** One fire of a trigger; (trigger_id, slot) is unique: the claim. */
export interface TriggerFiresTable {
  id: string
  trigger_id: string
  /** A schedule's slot time (ISO), `delivery:<id>` for a webhook, `manual:<id>` for "run now". */
  slot: string
  source: 'schedule' | 'webhook' | 'manual'
  status: 'claimed' | 'started' | 'skipped' | 'failed' | 'filtered'
  reason: string | null
  run_id: string | null
  conversation_id: string | null
  /** JSON of where this fire's report goes (the issue of the delivery), or null. */
  report_target: string | null
  report_status: string | null
  report_error: string | null
  created_at: string
  updated_at: string
}

export interface NotificationChannelsTable {
  id: string
  user_id: string
  type: 'webpush' | 'webhook'
  format: 'webpush' | 'generic' | 'slack' | 'discord' | 'ntfy'
  name: string
  url: string
  /** Vault envelope: the webhook's HMAC secret, or a push subscription's keys (JSON). */
  secret_envelope: string
  /** JSON array of event names. */
  events: string
  /** JSON array of project ids; null = every project the user may see. */
  project_ids: string | null
  created_at: string
}

export interface NotificationDeliveriesTable {
  id: string
  channel_id: string
  user_id: string
  event: string
  source_key: string
  /** JSON: the notification (stable across retries). */
  payload: string
  status: 'pending' | 'sending' | 'delivered' | 'failed'
  attempts: number
  next_attempt_at: string
  claimed_by: string | null
  claimed_until: string | null
  last_error: string | null
  last_status_code: number | null
  created_at: string
  delivered_at: string | null
}

export interface NotificationVapidKeysTable {
  id: string
  public_key: string
  private_envelope: string
  created_at: string
}

/** A comment on lines of a workspace's diff, sent to its agent as part of one review. */
export interface ReviewCommentsTable {
  id: string
  user_id: string
  workspace_id: string
  /** The comments posted together share it (one message to the agent). */
  review_id: string
  path: string
  start_line: number
  end_line: number
  body: string
  /** The lines commented on, as they were. */
  quoted: string
  /** The workspace's HEAD and the file's blob (of the working state) when commented. */
  commit_sha: string
  blob_sha: string
  /** The run the review started, once sent. */
  run_id: string | null
  created_at: string
}

export interface Database {
  users: UsersTable
  personal_access_tokens: PersonalAccessTokensTable
  sessions: SessionsTable
  login_links: LoginLinksTable
  provider_credentials: ProviderCredentialsTable
  builtin_settings: BuiltinSettingsTable
  agent_profiles: AgentProfilesTable
  conversations: ConversationsTable
  messages: MessagesTable
  runs: RunsTable
  run_events: RunEventsTable
  pending_actions: PendingActionsTable
  audit_events: AuditEventsTable
  workspaces: WorkspacesTable
  proxy_requests: ProxyRequestsTable
  proxy_spend: ProxySpendTable
  proxy_usage: ProxyUsageTable
  nodes: NodesTable
  projects: ProjectsTable
  project_members: ProjectMembersTable
  workspace_ports: WorkspacePortsTable
  workspace_setups: WorkspaceSetupsTable
  workspace_host_copies: WorkspaceHostCopiesTable
  workspace_config_approvals: WorkspaceConfigApprovalsTable
  attempt_groups: AttemptGroupsTable
  attempts: AttemptsTable
  triggers: TriggersTable
  trigger_fires: TriggerFiresTable
  notification_channels: NotificationChannelsTable
  notification_deliveries: NotificationDeliveriesTable
  notification_vapid_keys: NotificationVapidKeysTable
  review_comments: ReviewCommentsTable
}
