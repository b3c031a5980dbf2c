// Agents and runs over MCP: which agents there are, start a run, follow its events, cancel it. A run
// starts exactly as POST /api/runs starts one (same validation, same queue).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { AppError } from '../../core/errors.js'
import { submitRunSchema } from '../../runs/submit-run.js'
import { describeAgents } from '../routes/agent-routes.js'
import type { McpToolDeps } from './mcp-server.js'
import { jsonResult } from './tool-results.js'

/** Events per get_run answer; the caller pages on with afterSeq. */
const EVENT_PAGE = 500

const startRunInput = z.strictObject({
  agent: submitRunSchema.shape.agent.describe(
    'A profile of hangar.yaml, an adapter id (claude-code, codex, …) or builtin. Default: the default agent.',
  ),
  prompt: submitRunSchema.shape.prompt.describe('What the agent should do.'),
  conversationId: submitRunSchema.shape.conversationId.describe(
    'Continue this conversation (of the built-in agent) instead of starting a new one.',
  ),
  projectId: submitRunSchema.shape.projectId.describe(
    'The project to work on (prj_…, one granted to you); cwd is then relative to it. Leave out with ' +
      'conversationId: a conversation works on its own project.',
  ),
  cwd: submitRunSchema.shape.cwd.describe(
    'The working directory, relative to the project directory; it must be inside the project (or a ' +
      'root of server.allowedRoots). Default: the project directory.',
  ),
  resumeRunId: submitRunSchema.shape.resumeRunId.describe(
    "Continue this earlier run's agent session (an interrupted one too), in the workspace it worked in. " +
      "Leave out cwd and conversationId; agent defaults to the earlier run's.",
  ),
})

const runIdInput = z.string().min(1).describe('The run id (run_…), as start_run returned it.')

export function registerRunTools(server: McpServer, deps: McpToolDeps): void {
  const { runtime, store, guard } = deps
  const userId = deps.principal.user.id

  server.registerTool(
    'list_agents',
    {
      description:
        'The agents Hangar can run: each agent CLI with whether it is installed, its version, sign-in ' +
        "state and capabilities, Hangar's built-in agent, and the profiles of hangar.yaml.",
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => guard('list_agents', async () => jsonResult(await describeAgents(runtime, userId))),
  )

  server.registerTool(
    'list_projects',
    {
      description:
        'The projects you may work on (directories of the daemon’s host): their id, name, path and kind ' +
        '(git: runs get worktrees; folder: copies). Pass an id as start_run’s projectId.',
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => guard('list_projects', async () => jsonResult({ projects: await runtime.projects.list(userId) })),
  )

  server.registerTool(
    'start_run',
    {
      description:
        'Queue a run of an agent on a prompt and return it at once (status queued). Follow it with ' +
        'get_run. An agent CLI works in place in the directory (the owner) or in a worktree of it (anyone ' +
        'else); the built-in agent proposes its writes.',
      inputSchema: startRunInput,
      // An agent CLI edits files in place as it goes, so a run may change anything in its directory.
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    (input) =>
      guard('start_run', async () => {
        const run = await runtime.submitRun(userId, input)
        return jsonResult({ run }, `Run ${run.id} is ${run.status}; follow it with get_run.`)
      }),
  )

  server.registerTool(
    'get_run',
    {
      description:
        `A run's status and its events after afterSeq (at most ${EVENT_PAGE} at a time; "more" says ` +
        'whether to call again with afterSeq = lastSeq). The run is over when its status is succeeded, ' +
        'failed, cancelled, interrupted or awaiting_confirmation.',
      inputSchema: z.strictObject({
        runId: runIdInput,
        afterSeq: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe('Only events with a larger seq. Default 0: from the start.'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) =>
      guard('get_run', async () => {
        const runs = store.forUser(userId).runs
        const run = await runs.get(input.runId)
        if (!run) throw new AppError('not_found', `no run ${input.runId}`)
        const page = await runs.listEvents(run.id, {
          afterSeq: input.afterSeq ?? 0,
          limit: EVENT_PAGE + 1,
        })
        const events = page.slice(0, EVENT_PAGE)
        return jsonResult({
          run,
          events,
          lastSeq: events.at(-1)?.seq ?? input.afterSeq ?? 0,
          more: page.length > EVENT_PAGE,
        })
      }),
  )

  server.registerTool(
    'cancel_run',
    {
      description: 'Cancel a queued or running run; its agent process is stopped.',
      inputSchema: z.strictObject({ runId: runIdInput }),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (input) =>
      guard('cancel_run', async () => {
        const run = await runtime.scheduler.cancel(userId, input.runId)
        return jsonResult({ run }, `Run ${run.id} is ${run.status}.`)
      }),
  )
}
