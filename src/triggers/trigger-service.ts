// Triggers: the one service REST (/api/triggers, /api/hooks/:id), the CLI and the web UI go through. A
// trigger belongs to the user who made it and fires as that user: it may name only a project (or a
// conversation) that user may use, checked at creation and again at every fire. A webhook trigger's
// secret is shown once, at creation, and kept as a vault envelope (the HMAC needs it back). Reports of
// fired runs go to a `ReportTarget` by the trigger's `report.type`, whose `check` (e.g. "the channel is the
// creator's") runs at creation and again before each report.
import type { HangarConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { ProjectService } from '../projects/project-service.js'
import type { VaultState } from '../store/credentials-service.js'
import type {
  Trigger,
  TriggerFilterConfig,
  TriggerFire,
  TriggerReportConfig,
} from '../store/repositories/triggers-repository.js'
import type { Store } from '../store/store.js'
import { parseCron } from './cron.js'
import { filterMismatch, renderTemplate } from './payload-template.js'
import type { FireOutcome, TriggerFirer } from './trigger-fire.js'
import { buildReport, issueOfPayload, type ReportTarget } from './trigger-report.js'
import { newWebhookSecret, verifySignature } from './webhook-signature.js'

export const TRIGGER_SECRET_PURPOSE = 'trigger-secret'

export interface NewTriggerInput {
  name: string
  kind: 'schedule' | 'webhook'
  cron?: string | undefined
  timezone?: string | undefined
  missed?: 'skip' | 'once' | undefined
  projectId?: string | undefined
  agent?: string | undefined
  prompt: string
  conversationId?: string | undefined
  filter?: TriggerFilterConfig | undefined
  report?: TriggerReportConfig | undefined
}

export interface CreatedTrigger extends Trigger {
  /** `/api/hooks/<id>` for a webhook trigger. */
  url?: string
  /** The webhook secret: in this answer only, never again. */
  secret?: string
}

export interface WebhookDelivery {
  body: Uint8Array
  signature: string | undefined
  deliveryId: string | undefined
  event: string | undefined
  /** Called once the delivery is authentic, before it is claimed (the per-trigger rate limit throws). */
  beforeFire?: () => void
}

export type WebhookAnswer =
  | { status: 401; reason: string }
  | { status: 400; reason: string }
  | { status: 200; duplicate: true }
  | { status: 202; outcome: FireOutcome }

export interface TriggerServiceOptions {
  store: Store
  projects: Pick<ProjectService, 'forNewConversation' | 'forConversation'>
  vaultState: VaultState
  config: HangarConfig
  firer: TriggerFirer
  reportTargets: readonly ReportTarget[]
  log: Logger
}

const NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/

export function createTriggerService(options: TriggerServiceOptions) {
  const { store, log, firer } = options
  let baseUrl: string | undefined

  async function owned(userId: string, id: string): Promise<Trigger> {
    const trigger = await store.triggers.get(id)
    // Another user's trigger is not found, like every other object.
    if (!trigger || trigger.userId !== userId) throw new AppError('not_found', `no trigger ${id}`)
    const { secretEnvelope: _secret, ...rest } = trigger
    return rest
  }

  async function find(userId: string, idOrName: string): Promise<Trigger> {
    const byName = await store.triggers.findByName(userId, idOrName)
    return byName ?? owned(userId, idOrName)
  }

  function hookPath(id: string): string {
    return `/api/hooks/${id}`
  }

  async function checkPlace(userId: string, input: NewTriggerInput): Promise<string | null> {
    if (input.conversationId) {
      if (input.projectId)
        throw new AppError('invalid_request', 'projectId does not apply with conversationId', {
          hint: "a conversation's runs work on its own project",
        })
      const conversation = await store.forUser(userId).conversations.get(input.conversationId)
      if (!conversation) throw new AppError('not_found', `no conversation ${input.conversationId}`)
      return (await options.projects.forConversation(userId, conversation))?.id ?? null
    }
    return (await options.projects.forNewConversation(userId, input.projectId))?.id ?? null
  }

  return {
    setBaseUrl(url: string | undefined) {
      baseUrl = url
    },

    async create(userId: string, actor: string, input: NewTriggerInput): Promise<CreatedTrigger> {
      if (!NAME.test(input.name))
        throw new AppError('invalid_request', `invalid trigger name "${input.name}"`, {
          hint: 'letters, digits, ".", "_" or "-", at most 64',
          details: { field: 'name' },
        })
      if (await store.triggers.findByName(userId, input.name))
        throw new AppError('conflict', `a trigger named ${input.name} exists already`)
      if (input.kind === 'schedule') {
        if (!input.cron)
          throw new AppError('invalid_request', 'a schedule trigger needs cron', {
            details: { field: 'cron' },
          })
        parseCron(input.cron, input.timezone ?? 'UTC')
      } else if (input.cron || input.timezone || input.missed) {
        throw new AppError('invalid_request', 'cron, timezone and missed are for schedule triggers')
      }
      if (input.kind !== 'webhook' && input.filter)
        throw new AppError('invalid_request', 'filter is for webhook triggers')
      const reportTarget = input.report
        ? options.reportTargets.find((target) => target.type === input.report!.type)
        : undefined
      if (input.report && !reportTarget)
        throw new AppError('invalid_request', `no report target ${input.report.type}`)
      // The target's own rule, as the creator (a channel must be theirs): now, and again at report time.
      if (input.report) await reportTarget!.check?.(userId, input.report)
      if (input.report?.type === 'github' && !options.config.services.github)
        throw new AppError('invalid_request', 'report type github needs services.github in hangar.yaml', {
          hint: 'services: { github: { url: "https://api.github.com", auth: { bearerEnv: GITHUB_TOKEN } } }',
        })
      // As the creator: a project (or conversation) they may not use is refused now, and at every fire.
      const projectId = await checkPlace(userId, input)
      let secret: string | undefined
      let secretEnvelope: string | null = null
      if (input.kind === 'webhook') {
        if (!options.vaultState.vault)
          throw new AppError(
            'vault_unavailable',
            `webhook triggers need the key vault: ${options.vaultState.reason}`,
          )
        secret = newWebhookSecret()
        // The envelope is bound to the trigger's user and this use (its AAD).
        secretEnvelope = options.vaultState.vault.encrypt(secret, { purpose: TRIGGER_SECRET_PURPOSE, userId })
      }
      const trigger = await store.triggers.create({
        userId,
        name: input.name,
        kind: input.kind,
        cron: input.kind === 'schedule' ? input.cron!.trim() : null,
        timezone: input.kind === 'schedule' ? (input.timezone ?? 'UTC') : null,
        missed: input.missed ?? 'skip',
        projectId,
        agent: input.agent ?? null,
        prompt: input.prompt,
        conversationId: input.conversationId ?? null,
        filter: input.filter ?? null,
        report: input.report ?? null,
        secretEnvelope,
      })
      await store.forUser(userId).audit.append({
        actor,
        action: 'trigger.create',
        targetType: 'trigger',
        targetId: trigger.id,
        details: { name: trigger.name, kind: trigger.kind, projectId },
      })
      return trigger.kind === 'webhook' ? { ...trigger, url: hookPath(trigger.id), secret: secret! } : trigger
    },

    async list(userId: string): Promise<(Trigger & { url?: string })[]> {
      return (await store.triggers.listForUser(userId)).map((trigger) =>
        trigger.kind === 'webhook' ? { ...trigger, url: hookPath(trigger.id) } : trigger,
      )
    },

    get: find,

    async remove(userId: string, actor: string, idOrName: string): Promise<void> {
      const trigger = await find(userId, idOrName)
      await store.triggers.delete(userId, trigger.id)
      await store.forUser(userId).audit.append({
        actor,
        action: 'trigger.remove',
        targetType: 'trigger',
        targetId: trigger.id,
        details: { name: trigger.name },
      })
    },

    async fires(userId: string, idOrName: string, limit = 100): Promise<TriggerFire[]> {
      return store.triggers.fires((await find(userId, idOrName)).id, limit)
    },

    /** "Run now": a manual fire, with the same checks as any other. */
    async runNow(userId: string, idOrName: string): Promise<FireOutcome> {
      const trigger = await find(userId, idOrName)
      return firer.fire(trigger, {
        slot: `manual:${Date.now().toString(36)}:${Math.random().toString(36).slice(2, 10)}`,
        source: 'manual',
        // A webhook's template has no payload by hand: its fields are empty. A schedule's prompt is as written.
        prompt: trigger.kind === 'webhook' ? renderTemplate(trigger.prompt, {}) : trigger.prompt,
      })
    },

    /** A schedule's slot (the trigger scheduler calls this). */
    fireSlot(trigger: Trigger, slot: Date): Promise<FireOutcome> {
      return firer.fire(trigger, { slot: slot.toISOString(), source: 'schedule', prompt: trigger.prompt })
    },

    /**
     * An inbound delivery. The signature is checked first: an unknown trigger and a bad signature answer
     * alike (401) and start nothing. Then the delivery id is claimed (a replay answers `duplicate`).
     */
    async receiveWebhook(id: string, delivery: WebhookDelivery): Promise<WebhookAnswer> {
      const trigger = await store.triggers.get(id)
      const vault = options.vaultState.vault
      if (!trigger || trigger.kind !== 'webhook' || !trigger.secretEnvelope || !vault)
        return { status: 401, reason: 'bad signature' }
      let secret: string
      try {
        secret = vault.decrypt(trigger.secretEnvelope, {
          purpose: TRIGGER_SECRET_PURPOSE,
          userId: trigger.userId,
        })
      } catch (error) {
        log.error('a webhook trigger secret cannot be read', { triggerId: trigger.id, error })
        return { status: 401, reason: 'bad signature' }
      }
      if (!verifySignature(secret, delivery.body, delivery.signature)) {
        log.warn('webhook delivery with a bad signature', { triggerId: trigger.id })
        return { status: 401, reason: 'bad signature' }
      }
      if (!delivery.deliveryId || delivery.deliveryId.length > 200)
        return {
          status: 400,
          reason: 'X-GitHub-Delivery or X-Hangar-Delivery (at most 200 characters) is required',
        }
      delivery.beforeFire?.()
      let payload: unknown
      try {
        payload = JSON.parse(Buffer.from(delivery.body).toString('utf8'))
      } catch {
        return { status: 400, reason: 'the payload is not JSON' }
      }
      const { secretEnvelope: _secret, ...plain } = trigger
      const outcome = await firer.fire(plain, {
        slot: `delivery:${delivery.deliveryId}`,
        source: 'webhook',
        prompt: renderTemplate(trigger.prompt, payload),
        reportTarget: trigger.report ? issueOfPayload(payload) : null,
        filteredOut: filterMismatch(trigger.filter, delivery.event, payload),
      })
      if (!outcome.fired && outcome.duplicate) return { status: 200, duplicate: true }
      return { status: 202, outcome }
    },

    /** A run ended (any daemon): when a fire started it and its trigger reports, one daemon sends it. */
    async runEnded(runId: string): Promise<void> {
      const fire = await store.triggers.fireOfRun(runId)
      if (!fire) return
      const trigger = await store.triggers.get(fire.triggerId)
      if (!trigger?.report) return
      const target = options.reportTargets.find((candidate) => candidate.type === trigger.report!.type)
      if (!target || !(await store.triggers.claimReport(fire.id))) return
      try {
        const report = await buildReport(store, trigger, fire, runId, baseUrl)
        await target.check?.(trigger.userId, trigger.report)
        const config = trigger.report
        const destination =
          fire.reportTarget ??
          (config.type === 'github' && config.repository && config.issue
            ? { repository: config.repository, issue: config.issue }
            : null)
        await target.send(report, destination, trigger)
        await store.triggers.updateFire(fire.id, { reportStatus: 'sent' })
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        log.warn('trigger report failed', { triggerId: trigger.id, fireId: fire.id, reason })
        await store.triggers.updateFire(fire.id, { reportStatus: 'failed', reportError: reason })
      }
    },
  }
}

export type TriggerService = ReturnType<typeof createTriggerService>
