// Triggers and their fires. Triggers are listed per user; the scheduler and the webhook route read them by
// id across users (the trigger service decides who may do what before it gets here). A fire is claimed by
// inserting its (trigger_id, slot) row: the unique constraint makes the claim exactly-once across every
// daemon sharing the store, and a replayed webhook delivery finds its slot taken.
import { newId } from '../../core/ids.js'
import type { TriggerFiresTable, TriggersTable } from '../schema.js'
import { fromJson, nowIso, type RepositoryContext, toJson } from './context.js'

export type TriggerReportConfig =
  | {
      /** `github`: a comment on the originating issue through hangar.yaml's `services.github`. */
      type: 'github'
      /** owner/name; default: the webhook payload's `repository.full_name`. */
      repository?: string | undefined
      /** Default: the webhook payload's `issue.number`. */
      issue?: number | undefined
    }
  | {
      /** `channel`: a delivery (event `trigger.report`) to one of the creator's notification channels. */
      type: 'channel'
      channelId: string
    }

/** The GitHub issue a fire's report goes to. */
export interface ReportTargetRef {
  repository: string
  issue: number
}

export interface TriggerFilterConfig {
  event?: string | undefined
  action?: string | undefined
  label?: string | undefined
}

export interface Trigger {
  id: string
  userId: string
  name: string
  kind: 'schedule' | 'webhook'
  cron: string | null
  timezone: string | null
  missed: 'skip' | 'once'
  projectId: string | null
  agent: string | null
  prompt: string
  conversationId: string | null
  filter: TriggerFilterConfig | null
  report: TriggerReportConfig | null
  createdAt: string
}

export type FireStatus = TriggerFiresTable['status']
export type FireSource = TriggerFiresTable['source']

export interface TriggerFire {
  id: string
  triggerId: string
  slot: string
  source: FireSource
  status: FireStatus
  reason: string | null
  runId: string | null
  conversationId: string | null
  /** The run's status now (its outcome once it ended), or null. */
  runStatus: string | null
  reportTarget: ReportTargetRef | null
  reportStatus: string | null
  reportError: string | null
  createdAt: string
}

export interface NewTrigger extends Omit<Trigger, 'id' | 'createdAt'> {
  secretEnvelope: string | null
}

function toTrigger(row: TriggersTable): Trigger {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    kind: row.kind,
    cron: row.cron,
    timezone: row.timezone,
    missed: row.missed,
    projectId: row.project_id,
    agent: row.agent,
    prompt: row.prompt,
    conversationId: row.conversation_id,
    filter: fromJson<TriggerFilterConfig>(row.filter),
    report: fromJson<TriggerReportConfig>(row.report),
    createdAt: row.created_at,
  }
}

function toFire(row: TriggerFiresTable & { run_status: string | null }): TriggerFire {
  return {
    id: row.id,
    triggerId: row.trigger_id,
    slot: row.slot,
    source: row.source,
    status: row.status,
    reason: row.reason,
    runId: row.run_id,
    conversationId: row.conversation_id,
    runStatus: row.run_status,
    reportTarget: fromJson<ReportTargetRef>(row.report_target),
    reportStatus: row.report_status,
    reportError: row.report_error,
    createdAt: row.created_at,
  }
}

export function createTriggersRepository(context: RepositoryContext) {
  const { db } = context

  const firesWithRun = () =>
    db
      .selectFrom('trigger_fires')
      .leftJoin('runs', 'runs.id', 'trigger_fires.run_id')
      .selectAll('trigger_fires')
      .select('runs.status as run_status')

  return {
    async create(input: NewTrigger): Promise<Trigger> {
      const row: TriggersTable = {
        id: newId('trg'),
        user_id: input.userId,
        name: input.name,
        kind: input.kind,
        cron: input.cron,
        timezone: input.timezone,
        missed: input.missed,
        project_id: input.projectId,
        agent: input.agent,
        prompt: input.prompt,
        conversation_id: input.conversationId,
        filter: input.filter ? toJson(input.filter) : null,
        report: input.report ? toJson(input.report) : null,
        secret: input.secretEnvelope,
        created_at: nowIso(context),
      }
      await db.insertInto('triggers').values(row).execute()
      return toTrigger(row)
    },

    /** Any user's trigger, with its secret envelope (the webhook route and the scheduler). */
    async get(id: string): Promise<(Trigger & { secretEnvelope: string | null }) | undefined> {
      const row = await db.selectFrom('triggers').selectAll().where('id', '=', id).executeTakeFirst()
      return row && { ...toTrigger(row), secretEnvelope: row.secret }
    },

    async findByName(userId: string, name: string): Promise<Trigger | undefined> {
      const row = await db
        .selectFrom('triggers')
        .selectAll()
        .where('user_id', '=', userId)
        .where('name', '=', name)
        .executeTakeFirst()
      return row && toTrigger(row)
    },

    async listForUser(userId: string): Promise<Trigger[]> {
      const rows = await db
        .selectFrom('triggers')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute()
      return rows.map(toTrigger)
    },

    /** Every user's schedule triggers (the scheduler's one query per tick). */
    async schedules(): Promise<Trigger[]> {
      const rows = await db.selectFrom('triggers').selectAll().where('kind', '=', 'schedule').execute()
      return rows.map(toTrigger)
    },

    async delete(userId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('triggers')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    /** Claims (trigger, slot): the fire's row when this caller got it, undefined when it was taken. */
    async claimFire(triggerId: string, slot: string, source: FireSource): Promise<TriggerFire | undefined> {
      const now = nowIso(context)
      const row: TriggerFiresTable = {
        id: newId('tfr'),
        trigger_id: triggerId,
        slot,
        source,
        status: 'claimed',
        reason: null,
        run_id: null,
        conversation_id: null,
        report_target: null,
        report_status: null,
        report_error: null,
        created_at: now,
        updated_at: now,
      }
      const result = await db
        .insertInto('trigger_fires')
        .values(row)
        .onConflict((conflict) => conflict.columns(['trigger_id', 'slot']).doNothing())
        .executeTakeFirst()
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return undefined
      return toFire({ ...row, run_status: null })
    },

    async updateFire(
      id: string,
      changes: {
        status?: FireStatus
        reason?: string | null
        runId?: string | null
        conversationId?: string | null
        reportTarget?: ReportTargetRef | null
        reportStatus?: string | null
        reportError?: string | null
      },
    ): Promise<void> {
      await db
        .updateTable('trigger_fires')
        .set({
          ...(changes.status !== undefined && { status: changes.status }),
          ...(changes.reason !== undefined && { reason: changes.reason }),
          ...(changes.runId !== undefined && { run_id: changes.runId }),
          ...(changes.conversationId !== undefined && { conversation_id: changes.conversationId }),
          ...(changes.reportTarget !== undefined && {
            report_target: changes.reportTarget ? toJson(changes.reportTarget) : null,
          }),
          ...(changes.reportStatus !== undefined && { report_status: changes.reportStatus }),
          ...(changes.reportError !== undefined && { report_error: changes.reportError }),
          updated_at: nowIso(context),
        })
        .where('id', '=', id)
        .execute()
    },

    /** Newest first. */
    async fires(triggerId: string, limit = 100): Promise<TriggerFire[]> {
      const rows = await firesWithRun()
        .where('trigger_fires.trigger_id', '=', triggerId)
        .orderBy('trigger_fires.created_at', 'desc')
        .orderBy('trigger_fires.id', 'desc')
        .limit(limit)
        .execute()
      return rows.map(toFire)
    },

    async fireOfRun(runId: string): Promise<TriggerFire | undefined> {
      const row = await firesWithRun().where('trigger_fires.run_id', '=', runId).executeTakeFirst()
      return row && toFire(row)
    },

    /** The latest schedule slot claimed for the trigger (ISO times sort as text). */
    async lastScheduleSlot(triggerId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom('trigger_fires')
        .select('slot')
        .where('trigger_id', '=', triggerId)
        .where('source', '=', 'schedule')
        .orderBy('slot', 'desc')
        .limit(1)
        .executeTakeFirst()
      return row?.slot
    },

    /** A run started by one of the trigger's fires that is still in one of `statuses`. */
    async activeRun(triggerId: string, statuses: readonly string[]): Promise<string | undefined> {
      const row = await db
        .selectFrom('trigger_fires')
        .innerJoin('runs', 'runs.id', 'trigger_fires.run_id')
        .select('runs.id')
        .where('trigger_fires.trigger_id', '=', triggerId)
        .where('runs.status', 'in', [...statuses])
        .limit(1)
        .executeTakeFirst()
      return row?.id
    },

    /** Takes the report of a fire: true for exactly one caller (conditional UPDATE). */
    async claimReport(fireId: string): Promise<boolean> {
      const result = await db
        .updateTable('trigger_fires')
        .set({ report_status: 'sending', updated_at: nowIso(context) })
        .where('id', '=', fireId)
        .where('report_status', 'is', null)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
  }
}

export type TriggersRepository = ReturnType<typeof createTriggersRepository>
