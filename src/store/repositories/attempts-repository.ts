// Attempt groups and their attempts, per user: a group is one prompt started with several agents, an
// attempt is one agent's conversation of it. Whether the caller may still use the group's project is the
// attempts service's question (src/runs/attempts-service.ts), never this file's.
import { newId } from '../../core/ids.js'
import type { AttemptGroupsTable, AttemptsTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export type CheckStatus = AttemptsTable['check_status']

export interface AttemptGroupRow {
  id: string
  userId: string
  projectId: string
  prompt: string
  baseRef: string | null
  pickedConversationId: string | null
  pickedAt: string | null
  createdAt: string
}

export interface AttemptRow {
  conversationId: string
  groupId: string
  position: number
  agent: string
  runId: string | null
  workspaceId: string | null
  checkCommand: string | null
  checkStatus: CheckStatus
  checkExitCode: number | null
  checkOutput: string | null
  filesChanged: number | null
  additions: number | null
  deletions: number | null
  finishedAt: string | null
  discardedAt: string | null
}

/** What an attempt ends with: its check's outcome and what it changed against its base. */
export interface AttemptOutcome {
  checkStatus: CheckStatus
  checkExitCode: number | null
  checkOutput: string | null
  filesChanged: number | null
  additions: number | null
  deletions: number | null
}

function toGroup(row: AttemptGroupsTable): AttemptGroupRow {
  return {
    id: row.id,
    userId: row.user_id,
    projectId: row.project_id,
    prompt: row.prompt,
    baseRef: row.base_ref,
    pickedConversationId: row.picked_conversation_id,
    pickedAt: row.picked_at,
    createdAt: row.created_at,
  }
}

function toAttempt(row: AttemptsTable): AttemptRow {
  return {
    conversationId: row.conversation_id,
    groupId: row.group_id,
    position: Number(row.position),
    agent: row.agent,
    runId: row.run_id,
    workspaceId: row.workspace_id,
    checkCommand: row.check_command,
    checkStatus: row.check_status,
    checkExitCode: row.check_exit_code === null ? null : Number(row.check_exit_code),
    checkOutput: row.check_output,
    filesChanged: row.files_changed === null ? null : Number(row.files_changed),
    additions: row.additions === null ? null : Number(row.additions),
    deletions: row.deletions === null ? null : Number(row.deletions),
    finishedAt: row.finished_at,
    discardedAt: row.discarded_at,
  }
}

export function createAttemptsRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    /** The group and its attempts (one per conversation, in the order the agents were named). */
    async create(input: {
      projectId: string
      prompt: string
      baseRef: string | null
      attempts: { conversationId: string; agent: string; workspaceId: string; checkCommand: string | null }[]
    }): Promise<AttemptGroupRow> {
      const row: AttemptGroupsTable = {
        id: newId('atg'),
        user_id: userId,
        project_id: input.projectId,
        prompt: input.prompt,
        base_ref: input.baseRef,
        picked_conversation_id: null,
        picked_at: null,
        created_at: nowIso(context),
      }
      await db.insertInto('attempt_groups').values(row).execute()
      await db
        .insertInto('attempts')
        .values(
          input.attempts.map((attempt, position) => ({
            conversation_id: attempt.conversationId,
            group_id: row.id,
            user_id: userId,
            position,
            agent: attempt.agent,
            run_id: null,
            workspace_id: attempt.workspaceId,
            check_command: attempt.checkCommand,
            check_status: 'pending' as const,
            check_exit_code: null,
            check_output: null,
            files_changed: null,
            additions: null,
            deletions: null,
            finished_at: null,
            discarded_at: null,
          })),
        )
        .execute()
      return toGroup(row)
    },
    async get(id: string): Promise<AttemptGroupRow | undefined> {
      const row = await db
        .selectFrom('attempt_groups')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toGroup(row)
    },
    /** Newest first. */
    async list(options: { limit?: number } = {}): Promise<AttemptGroupRow[]> {
      const rows = await db
        .selectFrom('attempt_groups')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(options.limit ?? 100)
        .execute()
      return rows.map(toGroup)
    },
    async attempts(groupId: string): Promise<AttemptRow[]> {
      const rows = await db
        .selectFrom('attempts')
        .selectAll()
        .where('group_id', '=', groupId)
        .where('user_id', '=', userId)
        .orderBy('position')
        .execute()
      return rows.map(toAttempt)
    },
    async byConversation(conversationId: string): Promise<AttemptRow | undefined> {
      const row = await db
        .selectFrom('attempts')
        .selectAll()
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toAttempt(row)
    },
    async setRun(conversationId: string, runId: string): Promise<void> {
      await db
        .updateTable('attempts')
        .set({ run_id: runId })
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .execute()
    },
    /** Takes the attempt's check for this process: true only for the one caller that moved it on. */
    async claimCheck(conversationId: string): Promise<boolean> {
      const result = await db
        .updateTable('attempts')
        .set({ check_status: 'running' })
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .where('check_status', '=', 'pending')
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** Puts a claimed check back (its process stops before it ran: a restart runs it again). */
    async releaseCheck(conversationId: string): Promise<void> {
      await db
        .updateTable('attempts')
        .set({ check_status: 'pending' })
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .where('check_status', '=', 'running')
        .execute()
    },
    async finish(conversationId: string, outcome: AttemptOutcome): Promise<AttemptRow | undefined> {
      await db
        .updateTable('attempts')
        .set({
          check_status: outcome.checkStatus,
          check_exit_code: outcome.checkExitCode,
          check_output: outcome.checkOutput,
          files_changed: outcome.filesChanged,
          additions: outcome.additions,
          deletions: outcome.deletions,
          finished_at: nowIso(context),
        })
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .execute()
      return this.byConversation(conversationId)
    },
    /** Marks the pick; false when the group was picked already (the first pick stands). */
    async pick(groupId: string, conversationId: string): Promise<boolean> {
      const result = await db
        .updateTable('attempt_groups')
        .set({ picked_conversation_id: conversationId, picked_at: nowIso(context) })
        .where('id', '=', groupId)
        .where('user_id', '=', userId)
        .where('picked_conversation_id', 'is', null)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    async markDiscarded(conversationId: string): Promise<void> {
      await db
        .updateTable('attempts')
        .set({ discarded_at: nowIso(context) })
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .execute()
    },
  }
}

/** Unscoped: attempts whose check waits (`pending`), for start-up recovery of every user's attempts. */
export function createPendingAttempts(context: RepositoryContext) {
  return {
    async list(): Promise<{ userId: string; conversationId: string }[]> {
      const rows = await context.db
        .selectFrom('attempts')
        .select(['user_id', 'conversation_id'])
        .where('check_status', '=', 'pending')
        .execute()
      return rows.map((row) => ({ userId: row.user_id, conversationId: row.conversation_id }))
    },
  }
}

export type AttemptsRepository = ReturnType<typeof createAttemptsRepository>
