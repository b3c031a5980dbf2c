// Conversations: a thread with an agent profile; each user message starts a run. The agent may be switched
// between runs (a message naming another agent), never during one (409). When the last run failed, the
// conversation offers a fallback — the user must accept it by sending a message with that agent. Each
// conversation works on one project (`projectId`: required once there are several, the only one when there
// is one; the caller must be granted it) in a workspace of its own (see workspace-service.ts), removed
// when it is deleted.
import type { Hono } from 'hono'
import { z } from 'zod'
import { isUsable } from '../../adapters/detection.js'
import { AppError } from '../../core/errors.js'
import { loadUserProfiles, resolveAgentOrDefault } from '../../runs/resolve-agent.js'
import type { RuntimeServices, ServerDeps } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'
import { checkStartPoint } from '../../workspaces/review/refs.js'

const createSchema = z.strictObject({
  agent: z.string().min(1).optional(),
  title: z.string().trim().min(1).max(200).optional(),
  projectId: z.string().min(1).optional(),
  baseRef: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("A local branch, tag or commit of the project that the conversation's workspace starts from"),
})
const messageSchema = z.strictObject({
  text: z.string().min(1).max(1_000_000),
  agent: z.string().min(1).optional(),
})

export function registerConversationRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { store: ServerDeps['store']; runtime: RuntimeServices },
): void {
  const { store, runtime } = deps

  app.post('/api/conversations', async (context) => {
    const userId = context.get('principal').user.id
    const body = await readJsonBody(context, createSchema)
    const project = await runtime.projects.forNewConversation(userId, body.projectId)
    const { adapters } = await runtime.detectAgents()
    const agent = await resolveAgentOrDefault(body.agent ?? project?.defaultAgent ?? undefined, {
      config: runtime.config,
      registry: runtime.adapters,
      detected: adapters,
      userProfiles: await loadUserProfiles(store, userId),
      builtinReadiness: () => runtime.builtinReadiness(userId),
    })
    // Checked now (it must exist), resolved again when the workspace is made on the first message.
    if (body.baseRef) await checkStartPoint(project?.path ?? runtime.projectDir, body.baseRef)
    const conversation = await store.forUser(userId).conversations.create({
      baseRef: body.baseRef ?? null,
      title: body.title ?? 'New conversation',
      profile: agent.name,
      project: project?.name ?? runtime.projectDir.split('/').pop() ?? 'project',
      projectId: project?.id ?? null,
    })
    return context.json(conversation, 201)
  })

  app.get('/api/conversations', async (context) => {
    const search = context.req.query('search')
    const projectId = context.req.query('projectId')
    return context.json(
      await store
        .forUser(context.get('principal').user.id)
        .conversations.list({ ...(search && { search }), ...(projectId && { projectId }) }),
    )
  })

  app.get('/api/conversations/:id', async (context) => {
    const scope = store.forUser(context.get('principal').user.id)
    const conversation = await scope.conversations.get(context.req.param('id'))
    if (!conversation) throw new AppError('not_found', `no conversation ${context.req.param('id')}`)
    const [messages, runs] = await Promise.all([
      scope.conversations.listMessages(conversation.id),
      scope.runs.list({ conversationId: conversation.id, limit: 200 }),
    ])
    const last = runs[0]
    let fallback: string[] | null = null
    if (last?.status === 'failed') {
      // Preferred agent → another detected, signed-in agent → the built-in agent when it has a provider.
      // Offered, never applied.
      const { adapters } = await runtime.detectAgents()
      const others = adapters
        .filter((adapter) => isUsable(adapter) && adapter.auth.state === 'ok' && adapter.id !== last.adapter)
        .map((adapter) => adapter.id)
      const builtin = (await runtime.builtinReadiness(context.get('principal').user.id)).ready
        ? ['builtin']
        : []
      fallback = [...new Set([conversation.profile, ...others, ...builtin])].filter(
        (name) => name !== last.agent,
      )
    }
    // Messages come redacted from the store; titles and prompts stored before redaction existed too.
    return context.json({ ...store.redactor.value({ ...conversation, runs }), messages, fallback })
  })

  // The conversation goes with its runs, messages and workspace (the branch only if Hangar made it).
  app.delete('/api/conversations/:id', async (context) => {
    const id = context.req.param('id')
    const workspaces = await runtime.workspaces.deleteConversation(context.get('principal').user.id, id)
    return context.json({ id, deleted: true, workspaces })
  })

  app.post('/api/conversations/:id/messages', async (context) => {
    const userId = context.get('principal').user.id
    const body = await readJsonBody(context, messageSchema)
    const run = await runtime.submitRun(userId, {
      prompt: body.text,
      conversationId: context.req.param('id'),
      ...(body.agent && { agent: body.agent }),
    })
    return context.json(run, 202)
  })
}
