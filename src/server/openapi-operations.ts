// Every REST operation of the daemon, as the OpenAPI document (src/server/openapi.ts) lists it: method, path,
// what it does, and its request body from the zod schema the route validates with.
import { z } from 'zod'
import { pickAttemptSchema, startAttemptsSchema } from '../runs/attempts-service.js'
import { resumeRunSchema } from '../runs/resume-run.js'
import { submitRunSchema } from '../runs/submit-run.js'
import { triggerCreateSchema } from './routes/trigger-routes.js'
import { projectCreateSchema, projectUpdateSchema } from './routes/project-routes.js'
import { approveWorkspaceConfigSchema } from './routes/workspace-routes.js'
import { landSchema, resolveSchema, reviewSchema } from './routes/review-routes.js'
import { createChannelSchema } from './routes/notification-routes.js'
import { USAGE, nullable, ref } from './openapi-schemas.js'

export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  path: string
  summary: string
  body?: z.ZodType
  /** Public routes need no credentials. */
  public?: boolean
  stream?: boolean
  /** JSON Schema of the 200 body (default: any JSON). */
  response?: Record<string, unknown>
  /** Optional query parameters. */
  query?: { name: string; description: string; schema: Record<string, unknown> }[]
}

export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/api/health',
    summary: 'Health of the daemon, its database and vault',
    public: true,
  },
  { method: 'get', path: '/api/openapi.json', summary: 'This document', public: true },
  { method: 'get', path: '/api/docs', summary: 'A readable API reference', public: true },
  {
    method: 'post',
    path: '/api/login',
    summary:
      'Trade a one-time sign-in link secret for a session cookie (JSON only, same origin; more than 20 failed sign-ins in 10 s from one client answer 429 with Retry-After)',
    public: true,
    body: z.strictObject({ token: z.string() }),
  },
  { method: 'post', path: '/api/logout', summary: 'End the current session' },
  { method: 'get', path: '/api/session', summary: 'Who is signed in (the web UI asks on load)' },
  {
    method: 'get',
    path: '/api/activity',
    summary: 'Server-sent run-start, run-end and approval-required events of all your runs (live only)',
    stream: true,
  },
  {
    method: 'get',
    path: '/api/agents',
    summary:
      'Adapters with detection, capabilities, profiles (each with sandboxMode), and sandbox: whether bubblewrap can confine runs here',
  },
  {
    method: 'get',
    path: '/api/runs',
    summary: 'Runs of the caller (filters: status, conversationId, limit)',
  },
  {
    method: 'post',
    path: '/api/runs',
    summary: 'Submit a run (queued, then scheduled)',
    body: submitRunSchema,
  },
  { method: 'get', path: '/api/runs/{id}', summary: 'One run' },
  {
    method: 'get',
    path: '/api/runs/{id}/events',
    summary: 'Server-sent events of a run (id: <seq>; Last-Event-ID replays)',
    stream: true,
  },
  {
    method: 'get',
    path: '/api/runs/{id}/requests',
    summary:
      "The run's request log: each model request through the proxy, with usage, cost and the feeds it carried",
  },
  { method: 'post', path: '/api/runs/{id}/cancel', summary: 'Cancel a queued or running run' },
  {
    method: 'post',
    path: '/api/runs/{id}/resume',
    summary:
      "Resume an ended run (an interrupted one, say): a new run that continues its agent session in the same workspace and conversation, as POST /api/runs { resumeRunId } (404 for another user's run; 409 while it is active or when its agent named no session)",
    body: resumeRunSchema,
  },
  {
    method: 'post',
    path: '/api/runs/{id}/finalize',
    summary:
      "Bring a run's changes back from its SSH target: a failed finalize, or a pending one (interrupted run)",
  },
  {
    method: 'get',
    path: '/api/conversations',
    summary: 'Conversations of the caller, most recently updated first',
    query: [
      {
        name: 'search',
        description: 'Only titles containing this (case-insensitive)',
        schema: { type: 'string' },
      },
      { name: 'projectId', description: 'Only conversations of this project', schema: { type: 'string' } },
    ],
  },
  {
    method: 'post',
    path: '/api/conversations',
    summary: 'Start a conversation with an agent',
    body: z.strictObject({
      agent: z.string().optional(),
      title: z.string().optional(),
      projectId: z
        .string()
        .optional()
        .describe('Required once there are several projects (400 names yours); default: the only one'),
    }),
  },
  {
    method: 'get',
    path: '/api/conversations/{id}',
    summary: 'A conversation with its messages, runs and fallback suggestion',
  },
  {
    method: 'delete',
    path: '/api/conversations/{id}',
    summary: 'Delete a conversation with its runs and workspace (409 while a run is active)',
    response: {
      type: 'object',
      required: ['id', 'deleted', 'workspaces'],
      properties: {
        id: { type: 'string' },
        deleted: { type: 'boolean' },
        workspaces: { type: 'array', items: ref('WorkspaceRemoval') },
      },
    },
  },
  {
    method: 'post',
    path: '/api/conversations/{id}/messages',
    summary: 'Send a message: starts a run (409 while one is active)',
    body: z.strictObject({ text: z.string(), agent: z.string().optional() }),
  },
  {
    method: 'get',
    path: '/api/conversations/{id}/events',
    summary: 'Server-sent events across the conversation’s runs (id: <runId>:<seq>)',
    stream: true,
  },
  { method: 'get', path: '/api/actions', summary: 'Proposals (filter: status=pending|applying|…)' },
  {
    method: 'post',
    path: '/api/actions/{id}/confirm',
    summary: 'Apply a proposal (approve scope or a session); the last one of a run queues its continuation',
  },
  {
    method: 'post',
    path: '/api/actions/{id}/reject',
    summary: 'Refuse a proposal (approve scope or a session), with a reason for the agent',
    body: z.strictObject({ reason: z.string().optional() }),
  },
  {
    method: 'get',
    path: '/api/settings/providers',
    summary: 'Provider settings of the caller (keys write-only)',
  },
  {
    method: 'get',
    path: '/api/settings/providers/{provider}',
    summary: 'One provider’s settings: keyConfigured and at most the last 4 characters',
  },
  {
    method: 'put',
    path: '/api/settings/providers/{provider}',
    summary: 'Set a provider key, model or base URL',
    body: z.strictObject({
      apiKey: z.string().nullable().optional(),
      model: z.string().nullable().optional(),
      baseUrl: z.string().nullable().optional(),
    }),
  },
  { method: 'delete', path: '/api/settings/providers/{provider}', summary: 'Forget a provider’s settings' },
  {
    method: 'get',
    path: '/api/settings/builtin',
    summary:
      "The caller's default provider and model for the built-in agent, and what it will use with no profile and why (effective: { provider, model, source: profile|user|operator|environment, reason }, or problem)",
  },
  {
    method: 'put',
    path: '/api/settings/builtin',
    summary:
      'Set the default provider (null clears it) and model of the built-in agent; precedence: profile → this → operator default → environment',
    body: z.strictObject({ provider: z.string().nullable(), model: z.string().nullable().optional() }),
  },
  {
    method: 'get',
    path: '/api/profiles',
    summary:
      'Profiles: from hangar.yaml (read-only) and created by the caller; sandboxMode says whether their runs are sandboxed',
  },
  {
    method: 'post',
    path: '/api/profiles',
    summary:
      "Create a profile (same schema and cross-reference checks as hangar.yaml agents.<name>, and feed paths only under a service's userFeedPaths); 400 invalid_request with details.fields key paths (definition.feeds[0].source). Without sandbox, a new profile gets sandbox: workspace",
  },
  {
    method: 'get',
    path: '/api/profiles/{name}',
    summary: 'One profile; issues lists what hangar.yaml no longer supports (e.g. a removed service)',
  },
  {
    method: 'put',
    path: '/api/profiles/{name}',
    summary:
      'Create or replace a profile of the caller; leaving sandbox out keeps the stored one (a new name gets workspace)',
  },
  { method: 'delete', path: '/api/profiles/{name}', summary: 'Delete a profile of the caller' },
  {
    method: 'get',
    path: '/api/profiles/{name}/feeds',
    summary: "A profile's resolved feed manifest (declaration order) with each feed's last fetch state",
  },
  {
    method: 'get',
    path: '/api/usage',
    summary:
      'Tokens and cost per UTC day or per agent (query: from, to as dates or ISO times; groupBy=day|agent; default the last 30 days by day), and each budget',
    query: [
      {
        name: 'from',
        description:
          'Start, inclusive: YYYY-MM-DD (UTC) or an ISO-8601 time (UTC without an offset). Default: the start of the UTC day 29 days before to',
        schema: { type: 'string' },
      },
      {
        name: 'to',
        description:
          'End, inclusive: an ISO-8601 time (UTC without an offset), or YYYY-MM-DD for the end of that UTC day. Default: now',
        schema: { type: 'string' },
      },
      {
        name: 'groupBy',
        description: 'day: every UTC day of the range, at most 366; agent: one group per agent',
        schema: { type: 'string', enum: ['day', 'agent'], default: 'day' },
      },
    ],
    response: USAGE,
  },
  {
    method: 'get',
    path: '/api/nodes',
    summary: 'The daemons sharing this store: alive, stopped or lost (lease expired), with their active runs',
  },
  {
    method: 'get',
    path: '/api/workspaces',
    summary: 'Active workspaces of the caller',
    response: { type: 'array', items: ref('Workspace') },
  },
  {
    method: 'get',
    path: '/api/workspaces/{id}',
    summary: 'One workspace, with its git status and whether it was changed outside Hangar',
    response: ref('WorkspaceDetails'),
  },
  {
    method: 'delete',
    path: '/api/workspaces/{id}',
    summary:
      'Remove a workspace: its files, and its branch only if Hangar created it (409 while a run uses it)',
    response: ref('WorkspaceRemoval'),
  },
  {
    method: 'get',
    path: '/api/workspaces/{id}/diff',
    summary:
      "A workspace's change set against its base: files with status, diff stats and patches (uncommitted ones marked), the agents' commits, uncommitted work and totals",
    query: [
      {
        name: 'base',
        description: 'Compare against this branch or commit (its merge-base) instead of the workspace base',
        schema: { type: 'string' },
      },
      { name: 'stat', description: '1 or true: stats only, no patches', schema: { type: 'string' } },
    ],
    response: {
      type: 'object',
      required: ['base', 'baseBranch', 'head', 'files', 'commits', 'uncommitted', 'stats'],
      properties: {
        base: { type: 'string', description: 'The commit compared against' },
        baseBranch: nullable('string'),
        head: { type: 'string' },
        files: { type: 'array', items: { type: 'object' } },
        commits: { type: 'array', items: { type: 'object' } },
        uncommitted: { type: 'object' },
        stats: { type: 'object' },
      },
    },
  },
  {
    method: 'get',
    path: '/api/workspaces/{id}/review',
    summary:
      "A workspace's stored review comments, each with the lines it quotes and `outdated` when those lines changed since",
    response: {
      type: 'object',
      required: ['comments'],
      properties: { comments: { type: 'array', items: ref('ReviewComment') } },
    },
  },
  {
    method: 'post',
    path: '/api/workspaces/{id}/review',
    summary:
      "Comment on lines of the workspace's files and send them to its conversation's agent as one message (202 { run, comments }; 400 for a file or line that is not there)",
    body: reviewSchema,
  },
  {
    method: 'post',
    path: '/api/workspaces/{id}/land',
    summary:
      "Land the workspace into a branch of the user's repository (merge, squash or rebase; uncommitted work committed first). Session or the approve scope; 409 for a dirty target checkout, a conflict (with the files; the repository untouched) or a land already going",
    body: landSchema,
  },
  {
    method: 'post',
    path: '/api/workspaces/{id}/resolve-conflicts',
    summary:
      'Start a run in the workspace that merges the target into it and resolves the conflicts its land would meet (202 { run, into, conflicts }); land again after it ends',
    body: resolveSchema,
  },
  {
    method: 'get',
    path: '/api/projects',
    summary: 'The projects the caller may use (the owner: all, with their members)',
    response: {
      type: 'object',
      required: ['projects'],
      properties: { projects: { type: 'array', items: ref('Project') } },
    },
  },
  {
    method: 'post',
    path: '/api/projects',
    summary:
      'Register a directory as a project (owner; 400 when missing, not a directory or the data dir; 409 when its path or name is taken)',
    body: projectCreateSchema,
    response: ref('Project'),
  },
  { method: 'get', path: '/api/projects/{id}', summary: 'One project', response: ref('Project') },
  {
    method: 'patch',
    path: '/api/projects/{id}',
    summary: 'Rename a project or change its default agent (owner)',
    body: projectUpdateSchema,
    response: ref('Project'),
  },
  {
    method: 'delete',
    path: '/api/projects/{id}',
    summary:
      'Unregister a project (owner; 204; its files stay; 409 while one of its runs is going; its conversations stay readable)',
  },
  {
    method: 'put',
    path: '/api/projects/{id}/members/{userId}',
    summary: 'Grant a project to a member (owner)',
    response: ref('Project'),
  },
  {
    method: 'delete',
    path: '/api/projects/{id}/members/{userId}',
    summary: 'Revoke a project from a member (owner)',
    response: ref('Project'),
  },
  { method: 'get', path: '/api/triggers', summary: "The caller's triggers (schedules and webhooks)" },
  {
    method: 'post',
    path: '/api/triggers',
    summary:
      'Add a trigger that starts runs as the caller, in a project (or conversation) the caller may use; a webhook trigger answers its url and secret, shown this once',
    body: triggerCreateSchema,
  },
  { method: 'get', path: '/api/triggers/{id}', summary: 'One trigger (by id or name)' },
  {
    method: 'get',
    path: '/api/triggers/{id}/fires',
    summary: "A trigger's fires, newest first, each with its run, the run's status and the report's",
  },
  {
    method: 'post',
    path: '/api/triggers/{id}/run',
    summary: 'Fire a trigger now (202 { fired, runId?, conversationId?, status?, reason? })',
  },
  { method: 'delete', path: '/api/triggers/{id}', summary: 'Remove a trigger (204; its runs stay)' },
  {
    method: 'post',
    path: '/api/hooks/{id}',
    public: true,
    summary:
      'An inbound webhook: X-Hub-Signature-256 or X-Hangar-Signature-256 (sha256=<hex HMAC of the raw body>), X-GitHub-Delivery or X-Hangar-Delivery; 401 bad signature, 200 duplicate, 202 { fired, … }, 413 over 1 MiB, 429 too many',
  },
  {
    method: 'get',
    path: '/api/workspace-config',
    summary:
      "The project's workspace lifecycle (copy, setup, teardown, ports): where it comes from, and whether the repository's .hangar/workspace.yaml is approved",
  },
  {
    method: 'post',
    path: '/api/workspace-config/approve',
    summary:
      "Approve the repository's .hangar/workspace.yaml as reviewed (owner only: its commands run on the host; 409 when it changed since)",
    body: approveWorkspaceConfigSchema,
  },
  {
    method: 'post',
    path: '/api/attempts',
    summary:
      'Start one prompt with several agents (1–8) in a git project, each in a conversation and worktree of its own (201; 400 for an unknown agent, no agents, too many, a non-git project or an unknown baseRef: nothing is made)',
    body: startAttemptsSchema,
  },
  { method: 'get', path: '/api/attempts', summary: "The caller's attempt groups, newest first" },
  {
    method: 'get',
    path: '/api/attempts/{id}',
    summary:
      'One attempt group side by side: per attempt its status, duration, tokens, cost (+costSource), files changed, diff stats and check result',
  },
  {
    method: 'post',
    path: '/api/attempts/{id}/pick',
    summary:
      "Pick one attempt (by its conversation): the others' runs are cancelled and their workspaces removed unless keepOthers (409 when another was picked)",
    body: pickAttemptSchema,
  },
  { method: 'post', path: '/api/mcp', summary: 'MCP Streamable HTTP endpoint (stateless; bearer PAT only)' },
  { method: 'get', path: '/api/tokens', summary: 'Personal access tokens (session only)' },
  {
    method: 'post',
    path: '/api/tokens',
    summary: 'Create a token, shown once (session only)',
    body: z.strictObject({
      name: z.string(),
      expiresIn: z.string().optional(),
      scopes: z.array(z.enum(['api', 'approve'])).optional(),
    }),
  },
  { method: 'delete', path: '/api/tokens/{id}', summary: 'Revoke a token (session only)' },
  {
    method: 'get',
    path: '/api/notifications/vapid-key',
    summary: "The instance's VAPID public key (base64url), for PushManager.subscribe",
  },
  { method: 'get', path: '/api/notifications/channels', summary: "The caller's notification channels" },
  {
    method: 'post',
    path: '/api/notifications/channels',
    summary:
      "Add a Web Push subscription or a webhook (generic, slack, discord, ntfy); a webhook's signing secret is in this answer only",
    body: createChannelSchema,
  },
  { method: 'delete', path: '/api/notifications/channels/{id}', summary: 'Remove a notification channel' },
  {
    method: 'post',
    path: '/api/notifications/channels/{id}/test',
    summary: 'Queue a test notification to a channel (202; see its deliveries)',
  },
  {
    method: 'get',
    path: '/api/notifications/channels/{id}/deliveries',
    summary: "A channel's delivery log: status, attempts, last error, newest first",
  },
]
