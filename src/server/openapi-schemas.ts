// The component schemas of the OpenAPI document (src/server/openapi.ts) that responses share, as JSON Schema.
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
export const nullable = (type: string) => ({ type: [type, 'null'] })

export const WORKSPACE = {
  type: 'object',
  description:
    'Where a conversation (or a one-off --isolate run) works: a git worktree on branch hangar/<conversation-id>, a copy of a project that is not a git repository, or the project in place.',
  required: [
    'id',
    'conversationId',
    'kind',
    'path',
    'projectPath',
    'branch',
    'baseRef',
    'createdBranch',
    'target',
    'nodeId',
    'status',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string' },
    conversationId: nullable('string'),
    kind: { type: 'string', enum: ['worktree', 'copy', 'in_place'] },
    path: { type: 'string' },
    projectPath: { type: 'string' },
    branch: nullable('string'),
    baseRef: { ...nullable('string'), description: 'The commit the worktree was made from' },
    createdBranch: { type: 'boolean', description: 'Hangar made the branch (so removing deletes it)' },
    target: { type: 'string' },
    nodeId: nullable('string'),
    status: { type: 'string', enum: ['active', 'removed'] },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
}

export const REVIEW_COMMENT = {
  type: 'object',
  description: 'A comment on lines of a workspace file, sent to its agent as part of a review',
  required: ['id', 'workspaceId', 'reviewId', 'path', 'startLine', 'endLine', 'body', 'quoted', 'outdated'],
  properties: {
    id: { type: 'string' },
    workspaceId: { type: 'string' },
    reviewId: { type: 'string', description: 'The comments sent together share it' },
    path: { type: 'string', description: 'The file, relative to the workspace' },
    startLine: { type: 'integer', minimum: 1 },
    endLine: { type: 'integer', minimum: 1 },
    body: { type: 'string' },
    quoted: { type: 'string', description: 'The lines commented on, as they were' },
    commit: { type: 'string' },
    blob: { type: 'string', description: "The file's blob when commented on" },
    runId: { ...nullable('string'), description: 'The run the review was sent in' },
    createdAt: { type: 'string', format: 'date-time' },
    outdated: { type: 'boolean', description: 'The lines under it changed since (or the file is gone)' },
  },
}

export const PROJECT = {
  type: 'object',
  description:
    "A directory of the daemon's host that conversations and runs work on: a git repository (worktrees) or a plain folder (copies).",
  required: ['id', 'name', 'path', 'kind', 'defaultAgent', 'createdAt'],
  properties: {
    id: { type: 'string', description: 'prj_…' },
    name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' },
    path: { type: 'string', description: 'Its real path' },
    kind: { type: 'string', enum: ['git', 'folder'] },
    defaultAgent: nullable('string'),
    check: { ...nullable('string'), description: "Its attempts' check command (npm test); null: none" },
    createdAt: { type: 'string', format: 'date-time' },
    members: {
      type: 'array',
      items: { type: 'string' },
      description: 'The user ids it is granted to (the owner’s view only)',
    },
  },
}

export const WORKSPACE_DETAILS = {
  allOf: [
    ref('Workspace'),
    {
      type: 'object',
      required: ['changedFiles', 'problem'],
      properties: {
        changedFiles: { ...nullable('integer'), description: 'Files git status --short lists (worktrees)' },
        problem: {
          ...nullable('string'),
          description: 'Why it cannot be used as it is (changed outside Hangar)',
        },
      },
    },
  ],
}

export const WORKSPACE_REMOVAL = {
  type: 'object',
  required: ['workspace', 'removedFiles', 'branch'],
  properties: {
    workspace: ref('Workspace'),
    removedFiles: { type: 'boolean' },
    branch: {
      type: ['object', 'null'],
      required: ['name', 'deleted', 'reason'],
      properties: {
        name: { type: 'string' },
        deleted: { type: 'boolean' },
        reason: { ...nullable('string'), description: 'Why it was kept (e.g. not created by Hangar)' },
      },
    },
    teardown: {
      type: 'array',
      description: "The workspace lifecycle's teardown command, per place it ran (absent when none ran)",
      items: {
        type: 'object',
        required: ['target', 'exitCode', 'tail'],
        properties: {
          target: { type: 'string', description: '`local` or the SSH target' },
          exitCode: { type: 'integer' },
          tail: { type: 'string', description: 'The last lines of its output' },
        },
      },
    },
    hostCopies: {
      type: 'array',
      description: 'Its copies on SSH targets, each removed or not (absent when it was never shipped)',
      items: {
        type: 'object',
        required: ['target', 'removed'],
        properties: {
          target: { type: 'string', description: 'The SSH target' },
          removed: { type: 'boolean', description: 'False when the host could not be reached' },
          reason: { type: 'string', description: 'Why it was not removed' },
        },
      },
    },
  },
}

export const USAGE_NUMBERS = {
  inputTokens: { type: 'integer' },
  outputTokens: { type: 'integer' },
  cacheReadTokens: { type: 'integer' },
  cacheWriteTokens: { type: 'integer' },
  costUsd: { type: 'number', description: 'The priced part: metered by the proxy or reported by the agent' },
  agentCostUsd: { type: 'number', description: 'The part of costUsd the agents reported themselves' },
  unpriced: {
    type: 'integer',
    description: 'Requests and unproxied runs whose cost is unknown (not in costUsd)',
  },
  requests: { type: 'integer', description: 'Model requests the proxy metered' },
  runs: { type: 'integer' },
}

export const USAGE = {
  type: 'object',
  required: ['from', 'to', 'groupBy', 'total', 'groups', 'budgets'],
  properties: {
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    groupBy: { enum: ['day', 'agent'] },
    total: { type: 'object', properties: USAGE_NUMBERS },
    groups: {
      type: 'array',
      description:
        'groupBy=day: every UTC day of the range (zero-filled), with byAgent; agent: costliest first',
      items: {
        type: 'object',
        required: ['key'],
        properties: {
          key: { type: 'string', description: 'YYYY-MM-DD or the agent' },
          ...USAGE_NUMBERS,
          byAgent: {
            type: 'object',
            additionalProperties: {
              type: 'object',
              properties: { costUsd: { type: 'number' }, tokens: { type: 'integer' } },
            },
          },
        },
      },
    },
    budgets: {
      type: 'array',
      items: {
        type: 'object',
        required: ['profile', 'usd', 'window', 'since', 'spentUsd', 'fraction'],
        properties: {
          profile: { type: 'string' },
          usd: { type: 'number' },
          window: { type: 'string' },
          since: { type: 'string', format: 'date-time' },
          spentUsd: { type: 'number' },
          fraction: { type: 'number', description: 'spentUsd / usd; 1 or more is spent' },
        },
      },
    },
  },
}
