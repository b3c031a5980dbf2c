// The audit log: who did what to which object. Details are JSON and never hold a secret: they are stored
// through the redactor.
import { newId } from '../../core/ids.js'
import type { AuditEventsTable } from '../schema.js'
import { fromJson, nowIso, type RepositoryContext } from './context.js'

export interface AuditEvent {
  id: string
  actor: string
  action: string
  targetType: string | null
  targetId: string | null
  details: Record<string, unknown>
  createdAt: string
}

function toAuditEvent(row: AuditEventsTable): AuditEvent {
  return {
    id: row.id,
    actor: row.actor,
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    details: fromJson<Record<string, unknown>>(row.details) ?? {},
    createdAt: row.created_at,
  }
}

export function createAuditRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async append(input: {
      actor: string
      action: string
      targetType?: string
      targetId?: string
      details?: Record<string, unknown>
    }): Promise<AuditEvent> {
      const row: AuditEventsTable = {
        id: newId('aud'),
        user_id: userId,
        actor: input.actor,
        action: input.action,
        target_type: input.targetType ?? null,
        target_id: input.targetId ?? null,
        details: JSON.stringify(context.redactor.value(input.details ?? {})),
        created_at: nowIso(context),
      }
      await db.insertInto('audit_events').values(row).execute()
      return toAuditEvent(row)
    },
    async list(options: { limit?: number; action?: string } = {}): Promise<AuditEvent[]> {
      let query = db.selectFrom('audit_events').selectAll().where('user_id', '=', userId)
      if (options.action) query = query.where('action', '=', options.action)
      const rows = await query
        .orderBy('id', 'desc')
        .limit(options.limit ?? 100)
        .execute()
      return rows.map(toAuditEvent)
    },
  }
}

export type AuditRepository = ReturnType<typeof createAuditRepository>
