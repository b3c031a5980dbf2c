// The daemons that share this store (not per user: a node serves everyone). A heartbeat is an upsert, so
// a node that restarts under the same id takes its row back.
import type { NodesTable } from '../schema.js'
import type { RepositoryContext } from './context.js'

export interface NodeRecord {
  id: string
  url: string | null
  host: string
  pid: number
  bootId: string
  version: string
  startedAt: string
  heartbeatAt: string
  stoppedAt: string | null
}

const toNode = (row: NodesTable): NodeRecord => ({
  id: row.id,
  url: row.url,
  host: row.host,
  pid: row.pid,
  bootId: row.boot_id,
  version: row.version,
  startedAt: row.started_at,
  heartbeatAt: row.heartbeat_at,
  stoppedAt: row.stopped_at,
})

export function createNodesRepository(context: RepositoryContext) {
  const { db } = context
  return {
    /** Says this node is alive now (and who it is). */
    async heartbeat(node: Omit<NodeRecord, 'heartbeatAt' | 'stoppedAt'>, at: string): Promise<void> {
      const row: NodesTable = {
        id: node.id,
        url: node.url,
        host: node.host,
        pid: node.pid,
        boot_id: node.bootId,
        version: node.version,
        started_at: node.startedAt,
        heartbeat_at: at,
        stopped_at: null,
      }
      await db
        .insertInto('nodes')
        .values(row)
        .onConflict((conflict) => conflict.column('id').doUpdateSet({ ...row, id: undefined }))
        .execute()
    },
    /** A clean stop: the node is gone, but not dead (its runs were ended by its own scheduler). */
    async stopped(id: string, bootId: string, at: string): Promise<void> {
      await db
        .updateTable('nodes')
        .set({ stopped_at: at })
        .where('id', '=', id)
        .where('boot_id', '=', bootId)
        .execute()
    },
    async list(): Promise<NodeRecord[]> {
      return (await db.selectFrom('nodes').selectAll().orderBy('id').execute()).map(toNode)
    },
    /** The nodes that beat at `since` or later and have not stopped: which, which process (boot id), when. */
    async beatingSince(since: string): Promise<{ id: string; bootId: string; heartbeatAt: string }[]> {
      const rows = await db
        .selectFrom('nodes')
        .select(['id', 'boot_id', 'heartbeat_at'])
        .where('heartbeat_at', '>=', since)
        .where('stopped_at', 'is', null)
        .execute()
      return rows.map((row) => ({ id: row.id, bootId: row.boot_id, heartbeatAt: row.heartbeat_at }))
    },
    /** Ids of nodes that stopped beating before `since` without a clean stop: their leases expired. */
    async expiredSince(since: string): Promise<string[]> {
      const rows = await db
        .selectFrom('nodes')
        .select('id')
        .where('heartbeat_at', '<', since)
        .where('stopped_at', 'is', null)
        .execute()
      return rows.map((row) => row.id)
    },
  }
}

export type NodesRepository = ReturnType<typeof createNodesRepository>
