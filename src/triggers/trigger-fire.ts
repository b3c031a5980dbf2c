// One fire of a trigger: claim its (trigger, slot) row, refuse an overlap, re-check that the trigger's
// user may still work on its project, then start a conversation (or post in the given one) with the
// rendered prompt as that user. Every outcome — started, skipped, failed, filtered — is on the fire's row
// with its reason; nothing here throws to the caller for a fire that could not start.
import type { DetectedAdapter } from '../adapters/detection.js'
import type { AdapterRegistry } from '../adapters/registry.js'
import type { HangarConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { ProjectService } from '../projects/project-service.js'
import type { BuiltinReadiness } from '../runs/builtin-readiness.js'
import { loadUserProfiles, resolveAgentOrDefault } from '../runs/resolve-agent.js'
import type { SubmitRunRequest } from '../runs/submit-run.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type {
  FireSource,
  ReportTargetRef,
  Trigger,
  TriggerFire,
} from '../store/repositories/triggers-repository.js'
import type { Store } from '../store/store.js'
import { BUSY_RUN_STATUSES } from '../workspaces/workspace-service.js'

export interface TriggerFireDeps {
  store: Store
  projects: Pick<ProjectService, 'forNewConversation' | 'forConversation'>
  submitRun: (userId: string, request: SubmitRunRequest) => Promise<Run>
  config: HangarConfig
  adapters: AdapterRegistry
  detectAgents: () => Promise<{ adapters: DetectedAdapter[] }>
  builtinReadiness: (userId: string) => Promise<BuiltinReadiness>
  projectDir: string
  log: Logger
}

export interface FireRequest {
  slot: string
  source: FireSource
  /** The prompt to send (a webhook's rendered template; the trigger's prompt otherwise). */
  prompt: string
  reportTarget?: ReportTargetRef | null
  /** Set when the delivery did not pass the filter: recorded, nothing started. */
  filteredOut?: string | null
}

export type FireOutcome =
  | { fired: true; fire: TriggerFire; runId: string; conversationId: string | null }
  | { fired: false; duplicate: true }
  | { fired: false; duplicate?: false; fire: TriggerFire; status: TriggerFire['status']; reason: string }

/** A fire's outcome as the API and `--json` show it. */
export function fireOutcomeJson(outcome: FireOutcome) {
  if (outcome.fired)
    return {
      fired: true,
      fireId: outcome.fire.id,
      runId: outcome.runId,
      conversationId: outcome.conversationId,
    }
  if (outcome.duplicate) return { fired: false, duplicate: true }
  return { fired: false, fireId: outcome.fire.id, status: outcome.status, reason: outcome.reason }
}

export type FireOutcomeJson = ReturnType<typeof fireOutcomeJson>

function reasonOf(error: unknown): string {
  if (error instanceof AppError) return error.message
  return error instanceof Error ? error.message : String(error)
}

export function createTriggerFirer(deps: TriggerFireDeps) {
  const { store, log } = deps

  async function startRun(trigger: Trigger, prompt: string): Promise<Run> {
    const userId = trigger.userId
    if (trigger.conversationId) {
      const conversation = await store.forUser(userId).conversations.get(trigger.conversationId)
      if (!conversation) throw new AppError('not_found', `no conversation ${trigger.conversationId}`)
      // Access to its project, checked now (submitRun checks it again as it stores the run).
      await deps.projects.forConversation(userId, conversation)
      return deps.submitRun(userId, {
        prompt,
        conversationId: conversation.id,
        ...(trigger.agent && { agent: trigger.agent }),
      })
    }
    const project = await deps.projects.forNewConversation(userId, trigger.projectId ?? undefined)
    const agent = await resolveAgentOrDefault(trigger.agent ?? project?.defaultAgent ?? undefined, {
      config: deps.config,
      registry: deps.adapters,
      detected: (await deps.detectAgents()).adapters,
      userProfiles: await loadUserProfiles(store, userId),
      builtinReadiness: () => deps.builtinReadiness(userId),
    })
    const conversation = await store.forUser(userId).conversations.create({
      title: `${trigger.name}: ${prompt.split('\n')[0]!.slice(0, 120)}`,
      profile: agent.name,
      project: project?.name ?? deps.projectDir.split('/').pop() ?? 'project',
      projectId: project?.id ?? null,
    })
    return deps.submitRun(userId, { prompt, conversationId: conversation.id, agent: agent.name })
  }

  async function end(
    fire: TriggerFire,
    status: 'skipped' | 'failed' | 'filtered',
    reason: string,
    trigger: Trigger,
  ): Promise<FireOutcome> {
    await store.triggers.updateFire(fire.id, { status, reason })
    log.info('trigger fire did not start a run', {
      triggerId: trigger.id,
      fireId: fire.id,
      slot: fire.slot,
      status,
      reason,
    })
    return { fired: false, fire: { ...fire, status, reason }, status, reason }
  }

  return {
    async fire(trigger: Trigger, request: FireRequest): Promise<FireOutcome> {
      const fire = await store.triggers.claimFire(trigger.id, request.slot, request.source)
      if (!fire) return { fired: false, duplicate: true }
      if (request.reportTarget)
        await store.triggers.updateFire(fire.id, { reportTarget: request.reportTarget })
      if (request.filteredOut) return end(fire, 'filtered', request.filteredOut, trigger)
      const active = await store.triggers.activeRun(trigger.id, BUSY_RUN_STATUSES)
      if (active) return end(fire, 'skipped', `the previous run ${active} is still active`, trigger)
      if (!(await store.users.findById(trigger.userId)))
        return end(fire, 'failed', 'its user no longer exists', trigger)
      try {
        const run = await startRun(trigger, request.prompt)
        await store.triggers.updateFire(fire.id, {
          status: 'started',
          runId: run.id,
          conversationId: run.conversationId ?? null,
        })
        log.info('trigger fired', { triggerId: trigger.id, fireId: fire.id, slot: fire.slot, runId: run.id })
        return { fired: true, fire, runId: run.id, conversationId: run.conversationId ?? null }
      } catch (error) {
        return end(fire, 'failed', reasonOf(error), trigger)
      }
    },
  }
}

export type TriggerFirer = ReturnType<typeof createTriggerFirer>
