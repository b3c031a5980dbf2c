// Runs and their event log. Events carry a dense per-run seq chosen by the one event writer; the
// (run_id, seq) primary key makes a duplicate or re-ordered write fail loudly.
import { type Kysely, sql } from 'kysely'
import type { Run } from '../../core/api-types.js'
import { envelopeDataJson } from '../../core/envelope-json.js'
import type { EventEnvelope, RunStatus, UsageTotals } from '../../core/events.js'
import { PROTOCOL_VERSION } from '../../core/events.js'
import { newId } from '../../core/ids.js'
import type { Database, RunEventsTable, RunsTable } from '../schema.js'
import type { AppendOptions } from '../run-events-appender.js'
import { fromJson, nowIso, type RepositoryContext, toCount } from './context.js'

export type { Run }

function toRun(row: RunsTable): Run {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    agent: row.agent,
    adapter: row.adapter,
    model: row.model,
    prompt: row.prompt,
    cwd: row.cwd,
    status: row.status as RunStatus,
    reason: row.reason,
    continues: row.continues,
    dependsOn: fromJson<string[]>(row.depends_on) ?? [],
    owner: { node: row.owner_node, pid: row.owner_pid, bootId: row.owner_boot_id },
    pinnedNode: row.pinned_node,
    projectId: row.project_id ?? null,
    agentPgid: row.agent_pgid,
    sessionId: row.session_id,
    usage: fromJson<UsageTotals>(row.usage),
    costUsd: row.cost_usd,
    // Shipped and not brought back yet (no outcome stored): the run's finalize is pending.
    workspaceFinalize: row.workspace_finalize ?? (row.workspace_sync !== null ? 'pending' : null),
    finalizeReason: row.finalize_reason,
    agentStatus: row.agent_status as RunStatus | null,
    workspaceSync: fromJson<unknown>(row.workspace_sync),
    createdAt: row.created_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  }
}

export interface NewRun {
  /** Minted by the caller when something must name the run before it is stored (its user message). */
  id?: string
  agent: string
  adapter: string
  model?: string | null
  prompt: string
  cwd: string
  conversationId?: string | null
  continues?: string | null
  dependsOn?: string[]
  status?: RunStatus
  /** The only node that may claim it. */
  pinnedNode?: string | null
  /** The project it works on. */
  projectId?: string | null
}

export interface RunChanges {
  status?: RunStatus
  reason?: string | null
  sessionId?: string | null
  usage?: UsageTotals | null
  costUsd?: number | null
  owner?: { node: string | null; pid: number | null; bootId: string | null }
  agentPgid?: number | null
  /** `pending` is stored as no outcome (with `workspaceSync` set): see toRun. */
  workspaceFinalize?: 'ok' | 'failed' | 'pending' | null
  finalizeReason?: string | null
  agentStatus?: RunStatus | null
  workspaceSync?: unknown
  startedAt?: string | null
  endedAt?: string | null
}

/** Five bound parameters a row: well under SQLite's 32,766 and PostgreSQL's 65,535. */
const ROWS_PER_INSERT = 1000

/** What `data` holds: the event's own fields, without the envelope's (they have their columns). */

export function createRunsRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async create(input: NewRun): Promise<Run> {
      const row: RunsTable = {
        id: input.id ?? newId('run'),
        user_id: userId,
        conversation_id: input.conversationId ?? null,
        agent: input.agent,
        adapter: input.adapter,
        model: input.model ?? null,
        prompt: input.prompt,
        cwd: input.cwd,
        status: input.status ?? 'queued',
        reason: null,
        continues: input.continues ?? null,
        depends_on: JSON.stringify(input.dependsOn ?? []),
        owner_node: null,
        pinned_node: input.pinnedNode ?? null,
        owner_pid: null,
        owner_boot_id: null,
        agent_pgid: null,
        session_id: null,
        usage: null,
        cost_usd: null,
        workspace_finalize: null,
        finalize_reason: null,
        agent_status: null,
        workspace_sync: null,
        project_id: input.projectId ?? null,
        created_at: nowIso(context),
        started_at: null,
        ended_at: null,
      }
      await db.insertInto('runs').values(row).execute()
      return toRun(row)
    },
    async get(id: string): Promise<Run | undefined> {
      const row = await db
        .selectFrom('runs')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toRun(row)
    },
    async list(
      options: { status?: RunStatus; conversationId?: string; limit?: number } = {},
    ): Promise<Run[]> {
      let query = db.selectFrom('runs').selectAll().where('user_id', '=', userId)
      if (options.status) query = query.where('status', '=', options.status)
      if (options.conversationId) query = query.where('conversation_id', '=', options.conversationId)
      const rows = await query
        .orderBy('id', 'desc')
        .limit(options.limit ?? 100)
        .execute()
      return rows.map(toRun)
    },
    async update(id: string, changes: RunChanges): Promise<Run | undefined> {
      // The row as this statement left it, in the same round trip (a run's start and end make several).
      const row = await db
        .updateTable('runs')
        .set({
          ...(changes.status !== undefined && { status: changes.status }),
          ...(changes.reason !== undefined && { reason: changes.reason }),
          ...(changes.sessionId !== undefined && { session_id: changes.sessionId }),
          ...(changes.usage !== undefined && { usage: changes.usage && JSON.stringify(changes.usage) }),
          ...(changes.costUsd !== undefined && { cost_usd: changes.costUsd }),
          ...(changes.owner !== undefined && {
            owner_node: changes.owner.node,
            owner_pid: changes.owner.pid,
            owner_boot_id: changes.owner.bootId,
          }),
          ...(changes.agentPgid !== undefined && { agent_pgid: changes.agentPgid }),
          ...(changes.workspaceFinalize !== undefined && {
            workspace_finalize: changes.workspaceFinalize === 'pending' ? null : changes.workspaceFinalize,
          }),
          ...(changes.finalizeReason !== undefined && { finalize_reason: changes.finalizeReason }),
          ...(changes.agentStatus !== undefined && { agent_status: changes.agentStatus }),
          ...(changes.workspaceSync !== undefined && {
            workspace_sync: changes.workspaceSync === null ? null : JSON.stringify(changes.workspaceSync),
          }),
          ...(changes.startedAt !== undefined && { started_at: changes.startedAt }),
          ...(changes.endedAt !== undefined && { ended_at: changes.endedAt }),
        })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .returningAll()
        .executeTakeFirst()
      return row && toRun(row)
    },
    /**
     * Takes a queued run for execution: one winner, even with several schedulers on several nodes (the
     * status check is in the UPDATE). With `limit`, only while fewer than `max` runs of that agent are active
     * anywhere: on PostgreSQL the claims of one agent are serialized by an advisory lock and the run row is
     * taken with FOR UPDATE SKIP LOCKED (a node never waits on a row another node is claiming). Undefined
     * when it was not queued any more, or the agent has no free slot. `perUser`: count only this user's
     * runs of the agent (a profile made in the UI or API is its user's own; hangar.yaml's are shared).
     */
    async claimQueued(
      id: string,
      owner: { node: string; pid: number; bootId: string },
      limit?: { agent: string; max: number; perUser?: boolean },
    ): Promise<Run | undefined> {
      const claim = async (tx: typeof db): Promise<Run | undefined> => {
        if (limit && context.engine === 'postgres') {
          const slot = limit.perUser ? `hangar.agent.${limit.agent}@${userId}` : `hangar.agent.${limit.agent}`
          await sql`select pg_advisory_xact_lock(hashtext(${slot}))`.execute(tx)
          const free = await tx
            .selectFrom('runs')
            .select('id')
            .where('id', '=', id)
            .where('status', '=', 'queued')
            .forUpdate()
            .skipLocked()
            .executeTakeFirst()
          if (!free) return undefined
        }
        if (limit) {
          let active = tx
            .selectFrom('runs')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .where('agent', '=', limit.agent)
            .where('status', 'in', ['preparing', 'running', 'finalizing'])
          if (limit.perUser) active = active.where('user_id', '=', userId)
          const counted = await active.executeTakeFirstOrThrow()
          if (toCount(counted.count) >= limit.max) return undefined
        }
        const row = await tx
          .updateTable('runs')
          .set({
            status: 'preparing',
            owner_node: owner.node,
            owner_pid: owner.pid,
            owner_boot_id: owner.bootId,
            // Read after the slot was counted (and the agent's lock taken), so no two runs of an agent
            // ever overlap in their recorded times beyond its limit.
            started_at: nowIso(context),
          })
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .where('status', '=', 'queued')
          .returningAll()
          .executeTakeFirst()
        return row && toRun(row)
      }
      if (!limit || db.isTransaction) return claim(db)
      return (db as Kysely<Database>).transaction().execute((tx) => claim(tx))
    },
    /**
     * Stores a batch of envelopes of this user's runs: all of it, in one transaction, or none. `now`: the
     * last batch of a stream, stored without waiting for the commit interval (AppendOptions).
     */
    async appendEvents(envelopes: readonly EventEnvelope[], options?: AppendOptions): Promise<void> {
      if (envelopes.length === 0) return
      const data = envelopes.map(envelopeDataJson)
      if (context.appendRunEvents) return context.appendRunEvents(envelopes, data, options)
      // Inside a store transaction: the same rows through it, in slices under the bound-parameter limits.
      for (let start = 0; start < envelopes.length; start += ROWS_PER_INSERT) {
        const rows: RunEventsTable[] = envelopes
          .slice(start, start + ROWS_PER_INSERT)
          .map((envelope, index) => ({
            run_id: envelope.runId,
            seq: envelope.seq,
            ts: envelope.ts,
            type: envelope.type,
            data: data[start + index]!,
          }))
        await db.insertInto('run_events').values(rows).execute()
      }
    },
    async listEvents(
      runId: string,
      options: { afterSeq?: number; limit?: number } = {},
    ): Promise<EventEnvelope[]> {
      const rows = await db
        .selectFrom('run_events')
        .innerJoin('runs', 'runs.id', 'run_events.run_id')
        .select([
          'run_events.run_id',
          'run_events.seq',
          'run_events.ts',
          'run_events.type',
          'run_events.data',
        ])
        .where('runs.user_id', '=', userId)
        .where('run_events.run_id', '=', runId)
        .where('run_events.seq', '>', options.afterSeq ?? 0)
        .orderBy('run_events.seq')
        .limit(options.limit ?? 10_000)
        .execute()
      return rows.map(
        (row) =>
          ({
            v: PROTOCOL_VERSION,
            runId: row.run_id,
            seq: row.seq,
            ts: row.ts,
            type: row.type,
            // Events stored before redaction existed may hold secrets; replays never show them.
            ...context.redactor.value(JSON.parse(row.data) as object),
          }) as EventEnvelope,
      )
    },
    async lastEventSeq(runId: string): Promise<number> {
      const row = await db
        .selectFrom('run_events')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .where('run_id', '=', runId)
        .executeTakeFirst()
      return Number(row?.seq ?? 0)
    },
  }
}

export type RunsRepository = ReturnType<typeof createRunsRepository>

/** For the scheduler and start-up recovery: runs of every user, by status or owner. */
export function createRunQueue(context: RepositoryContext) {
  const { db } = context
  return {
    /** Queued runs `node` may claim (pinned to it, or to none), oldest first, with their owner's user id. */
    async queued(node: string, limit = 200): Promise<(Run & { userId: string })[]> {
      const rows = await db
        .selectFrom('runs')
        .selectAll()
        .where('status', '=', 'queued')
        .where((eb) => eb.or([eb('pinned_node', 'is', null), eb('pinned_node', '=', node)]))
        .orderBy('id')
        .limit(limit)
        .execute()
      return rows.map((row) => ({ ...toRun(row), userId: row.user_id }))
    },
    /** Runs a node was executing (not ended), for recovery after a restart. */
    /** Queued runs only `node` may claim: left behind when that node is gone. */
    async queuedPinnedTo(node: string): Promise<(Run & { userId: string })[]> {
      const rows = await db
        .selectFrom('runs')
        .selectAll()
        .where('status', '=', 'queued')
        .where('pinned_node', '=', node)
        .execute()
      return rows.map((row) => ({ ...toRun(row), userId: row.user_id }))
    },
    async activeOnNode(node: string): Promise<(Run & { userId: string })[]> {
      const rows = await db
        .selectFrom('runs')
        .selectAll()
        .where('owner_node', '=', node)
        .where('status', 'in', ['preparing', 'running', 'finalizing'])
        .execute()
      return rows.map((row) => ({ ...toRun(row), userId: row.user_id }))
    },
    /**
     * Runs (of any user) whose workspace's host copy may hold changes not brought back yet: shipped, and
     * not finalized. Few at any time: the record is cleared when a finalize succeeds.
     */
    async unfinalized(): Promise<(Run & { userId: string })[]> {
      const rows = await db.selectFrom('runs').selectAll().where('workspace_sync', 'is not', null).execute()
      return rows.map((row) => ({ ...toRun(row), userId: row.user_id }))
    },
    /** Ended runs `node` ran whose finalize is still pending (their daemon died): start-up recovery's. */
    async pendingFinalizeOn(node: string): Promise<(Run & { userId: string })[]> {
      const rows = await db
        .selectFrom('runs')
        .selectAll()
        .where('owner_node', '=', node)
        .where('workspace_sync', 'is not', null)
        .where('workspace_finalize', 'is', null)
        .where('status', 'not in', ['queued', 'preparing', 'running', 'finalizing'])
        .orderBy('id')
        .execute()
      return rows.map((row) => ({ ...toRun(row), userId: row.user_id }))
    },
    /** Status and finalize state of each run (dependency gating). */
    async statuses(
      ids: readonly string[],
    ): Promise<Map<string, { status: string; finalize: 'ok' | 'failed' | null }>> {
      if (ids.length === 0) return new Map()
      const rows = await db
        .selectFrom('runs')
        .select(['id', 'status', 'workspace_finalize'])
        .where('id', 'in', [...ids])
        .execute()
      return new Map(rows.map((row) => [row.id, { status: row.status, finalize: row.workspace_finalize }]))
    },
  }
}
