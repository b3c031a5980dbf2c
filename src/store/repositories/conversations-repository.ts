// Conversations and their normalized messages. Message `seq` is dense per conversation; the unique
// (conversation_id, seq) constraint turns a racing second writer into an error instead of a fork.
import { sql } from 'kysely'
import type { Conversation } from '../../core/api-types.js'
import { newId } from '../../core/ids.js'
import type { Message } from '../../core/messages.js'
import type { ConversationsTable, MessagesTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export type { Conversation }

export interface StoredMessage {
  id: string
  conversationId: string
  seq: number
  runId: string | null
  createdAt: string
  message: Message
}

function toConversation(row: ConversationsTable): Conversation {
  return {
    id: row.id,
    title: row.title,
    profile: row.profile,
    project: row.project,
    projectId: row.project_id ?? null,
    workspaceId: row.workspace_id,
    baseRef: row.base_ref ?? null,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

function toStoredMessage(row: MessagesTable, message: Message): StoredMessage {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    seq: row.seq,
    runId: row.run_id,
    createdAt: row.created_at,
    message,
  }
}

export function createConversationsRepository(context: RepositoryContext, userId: string) {
  const { db, redactor } = context
  return {
    async create(input: {
      title: string
      profile: string
      project: string
      projectId?: string | null
      baseRef?: string | null
    }): Promise<Conversation> {
      const now = nowIso(context)
      const row: ConversationsTable = {
        id: newId('conv'),
        user_id: userId,
        title: input.title,
        profile: input.profile,
        project: input.project,
        workspace_id: null,
        project_id: input.projectId ?? null,
        base_ref: input.baseRef ?? null,
        status: 'idle',
        created_at: now,
        updated_at: now,
      }
      await db.insertInto('conversations').values(row).execute()
      return toConversation(row)
    },
    async get(id: string): Promise<Conversation | undefined> {
      const row = await db
        .selectFrom('conversations')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toConversation(row)
    },
    async list(
      options: { search?: string; projectId?: string; limit?: number } = {},
    ): Promise<Conversation[]> {
      let query = db.selectFrom('conversations').selectAll().where('user_id', '=', userId)
      if (options.projectId) query = query.where('project_id', '=', options.projectId)
      if (options.search)
        query = query.where(sql<boolean>`lower(title) like ${`%${options.search.toLowerCase()}%`}`)
      const rows = await query
        .orderBy('updated_at', 'desc')
        .limit(options.limit ?? 100)
        .execute()
      return rows.map(toConversation)
    },
    async update(
      id: string,
      changes: Partial<Pick<Conversation, 'title' | 'profile' | 'status' | 'workspaceId'>>,
    ): Promise<Conversation | undefined> {
      await db
        .updateTable('conversations')
        .set({
          ...(changes.title !== undefined && { title: changes.title }),
          ...(changes.profile !== undefined && { profile: changes.profile }),
          ...(changes.status !== undefined && { status: changes.status }),
          ...(changes.workspaceId !== undefined && { workspace_id: changes.workspaceId }),
          updated_at: nowIso(context),
        })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .execute()
      return this.get(id)
    },
    async delete(id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('conversations')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
    /** Appends at the next seq. The conversation must be this user's. */
    async appendMessage(conversationId: string, unredacted: Message, runId?: string): Promise<StoredMessage> {
      // Every writer of messages (the agent loop, decided proposals, user prompts) passes here.
      const message = redactor.value(unredacted)
      // On PostgreSQL the conversation's row is locked for the rest of the transaction, so two writers
      // (e.g. proposals settled at once) take turns at max(seq) + 1 instead of colliding on it.
      let owned = db
        .selectFrom('conversations')
        .select('id')
        .where('id', '=', conversationId)
        .where('user_id', '=', userId)
      if (context.engine === 'postgres') owned = owned.forUpdate()
      if (!(await owned.executeTakeFirst()))
        throw new Error(`conversation ${conversationId} is not this user's`)
      const last = await db
        .selectFrom('messages')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .where('conversation_id', '=', conversationId)
        .executeTakeFirst()
      const row: MessagesTable = {
        id: newId('msg'),
        conversation_id: conversationId,
        user_id: userId,
        seq: Number(last?.seq ?? 0) + 1,
        role: message.role,
        content: JSON.stringify(message),
        tool_call_id: message.role === 'tool' ? message.toolCallId : null,
        run_id: runId ?? null,
        created_at: nowIso(context),
      }
      await db.insertInto('messages').values(row).execute()
      return toStoredMessage(row, message)
    },
    async listMessages(conversationId: string): Promise<StoredMessage[]> {
      const rows = await db
        .selectFrom('messages')
        .selectAll()
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .orderBy('seq')
        .execute()
      // Messages stored before redaction existed may hold secrets: never hand them out (or upstream) as they are.
      return rows.map((row) => toStoredMessage(row, redactor.value(JSON.parse(row.content) as Message)))
    },
  }
}

export type ConversationsRepository = ReturnType<typeof createConversationsRepository>
