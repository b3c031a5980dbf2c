// Submitting a run (POST /api/runs, a conversation message, MCP start_run): everything is validated
// first — cwd, dependencies, conversation, agent — and only then is a queued run stored and the
// scheduler woken. A message while the conversation has a run queued or running is a conflict.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import type { DetectedAdapter } from '../adapters/detection.js'
import type { AdapterRegistry } from '../adapters/registry.js'
import type { HangarConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import type { ActionsService } from './actions-service.js'
import { createIsolatedWorktree } from './isolated-worktree.js'
import { resolveAgent } from './resolve-agent.js'
import type { RunService } from './run-service.js'
import type { Scheduler } from './scheduler.js'

export const submitRunSchema = z.strictObject({
  agent: z.string().min(1).optional(),
  prompt: z.string().min(1, 'the prompt must not be empty').max(1_000_000),
  cwd: z.string().min(1).optional(),
  isolate: z.boolean().optional(),
  model: z.string().min(1).optional(),
  conversationId: z.string().min(1).optional(),
  dependsOn: z.array(z.string().min(1)).max(100).optional(),
})

export type SubmitRunRequest = z.output<typeof submitRunSchema>

export interface SubmitDeps {
  store: Store
  runs: RunService
  scheduler: Pick<Scheduler, 'kick'>
  actions: Pick<ActionsService, 'supersede'>
  config: HangarConfig
  adapters: AdapterRegistry
  detectAgents: () => Promise<{ adapters: DetectedAdapter[] }>
  projectDir: string
  dataDir: string
}

/** What POST /api/runs and conversation messages share: validation, then a queued run. */
export function createRunSubmitter(runtime: SubmitDeps) {
  const { store } = runtime
  return async function submitRun(userId: string, request: SubmitRunRequest): Promise<Run> {
    const scope = store.forUser(userId)
    const cwd = path.resolve(runtime.projectDir, request.cwd ?? '.')
    if (
      !(await stat(cwd).then(
        (info) => info.isDirectory(),
        () => false,
      ))
    ) {
      throw new AppError('invalid_request', `cwd ${cwd} is not a directory on the daemon's host`)
    }
    for (const dependency of request.dependsOn ?? []) {
      if (!(await scope.runs.get(dependency)))
        throw new AppError('not_found', `dependsOn: no run ${dependency}`)
    }
    const conversation = request.conversationId
      ? await scope.conversations.get(request.conversationId)
      : undefined
    if (request.conversationId && !conversation)
      throw new AppError('not_found', `no conversation ${request.conversationId}`)
    const { adapters } = await runtime.detectAgents()
    const agent = resolveAgent(request.agent ?? conversation?.profile, {
      config: runtime.config,
      registry: runtime.adapters,
      detected: adapters,
    })
    let conversationId = conversation?.id
    if (conversation) {
      const active = await scope.runs.list({ conversationId: conversation.id, limit: 20 })
      if (active.some((run) => ['queued', 'preparing', 'running', 'finalizing'].includes(run.status))) {
        throw new AppError('conflict', 'the conversation has a run queued or running', {
          hint: 'wait for it to end or cancel it, then send the message again',
        })
      }
      if (agent.name !== conversation.profile)
        await scope.conversations.update(conversation.id, { profile: agent.name })
      await runtime.actions.supersede(userId, conversation.id, `user:${userId}`)
    } else if (agent.kind === 'builtin') {
      const title = request.prompt.replace(/\s+/g, ' ').trim().slice(0, 80)
      conversationId = (
        await scope.conversations.create({
          title,
          profile: agent.name,
          project: path.basename(runtime.projectDir),
        })
      ).id
    }
    if (conversationId) {
      await scope.conversations.appendMessage(conversationId, {
        role: 'user',
        content: [{ type: 'text', text: request.prompt }],
      })
    }
    const workspace = request.isolate
      ? await createIsolatedWorktree(cwd, runtime.dataDir, `run-${Date.now().toString(36)}`)
      : cwd
    const run = await runtime.runs.enqueue(userId, {
      agent: agent.name,
      adapter: agent.kind === 'builtin' ? 'builtin' : agent.adapter.id,
      model: request.model ?? agent.profile?.model ?? null,
      prompt: request.prompt,
      cwd: workspace,
      conversationId: conversationId ?? null,
      dependsOn: request.dependsOn ?? [],
    })
    runtime.scheduler.kick()
    return run
  }
}
