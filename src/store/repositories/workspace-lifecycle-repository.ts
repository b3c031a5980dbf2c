// The workspace lifecycle's rows: ports held by live workspaces, setup outcomes per workspace and place,
// and the owner's approvals of repositories' `.hangar/workspace.yaml`. Keyed by workspace id (ids are
// global), not per user: the lifecycle service checks who may act before it gets here.
import { nowIso, type RepositoryContext } from './context.js'

/** The pool ports are handed out from, half-open: [from, to). */
export interface PortRange {
  from: number
  to: number
}

export const DEFAULT_PORT_RANGE: PortRange = { from: 41_000, to: 49_000 }

export interface PortBlock {
  /** HANGAR_PORT. */
  first: number
  count: number
}

export interface SetupRecord {
  workspaceId: string
  target: string
  /** The workspace's directory on that host. */
  dir: string
  status: 'succeeded' | 'failed'
  exitCode: number | null
  commandHash: string
  updatedAt: string
}

export interface ConfigApproval {
  project: string
  contentHash: string
  approvedBy: string
  approvedAt: string
}

/** The first block of `count` consecutive ports of `range` that none of `taken` (sorted) is in. */
export function firstFreeBlock(
  taken: readonly number[],
  count: number,
  range: PortRange,
): number | undefined {
  let start = range.from
  for (const port of taken) {
    if (port < start) continue
    if (port - start >= count) break
    start = port + 1
  }
  return start + count <= range.to ? start : undefined
}

export function createWorkspaceLifecycleRepository(context: RepositoryContext) {
  const { db } = context

  async function portsOf(workspaceId: string): Promise<PortBlock | undefined> {
    const rows = await db
      .selectFrom('workspace_ports')
      .select('port')
      .where('workspace_id', '=', workspaceId)
      .orderBy('port')
      .execute()
    if (rows.length === 0) return undefined
    return { first: rows[0]!.port, count: rows.length }
  }

  return {
    portsOf,

    /**
     * The workspace's ports: the block it holds already (stable across restarts), else the first free block
     * of `count` in `range`. One multi-row INSERT, so a block is taken whole or not at all; when another
     * daemon took one of its ports meanwhile (primary key), the next free block is tried.
     */
    async allocatePorts(
      workspaceId: string,
      count: number,
      range: PortRange = DEFAULT_PORT_RANGE,
    ): Promise<PortBlock | undefined> {
      if (count <= 0) return undefined
      for (let attempt = 0; ; attempt++) {
        const held = await portsOf(workspaceId)
        if (held) return held
        const taken = (await db.selectFrom('workspace_ports').select('port').orderBy('port').execute()).map(
          (row) => row.port,
        )
        const first = firstFreeBlock(taken, count, range)
        if (first === undefined) return undefined
        const now = nowIso(context)
        try {
          await db
            .insertInto('workspace_ports')
            .values(
              Array.from({ length: count }, (_, index) => ({
                port: first + index,
                workspace_id: workspaceId,
                created_at: now,
              })),
            )
            .execute()
          return { first, count }
        } catch (error) {
          if (attempt >= 8) throw error
        }
      }
    },

    async releasePorts(workspaceId: string): Promise<void> {
      await db.deleteFrom('workspace_ports').where('workspace_id', '=', workspaceId).execute()
    },

    async setups(workspaceId: string): Promise<SetupRecord[]> {
      const rows = await db
        .selectFrom('workspace_setups')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .orderBy('target')
        .execute()
      return rows.map((row) => ({
        workspaceId: row.workspace_id,
        target: row.target,
        dir: row.dir,
        status: row.status,
        exitCode: row.exit_code,
        commandHash: row.command_hash,
        updatedAt: row.updated_at,
      }))
    },

    async recordSetup(record: Omit<SetupRecord, 'updatedAt'>): Promise<void> {
      const values = {
        workspace_id: record.workspaceId,
        target: record.target,
        dir: record.dir,
        status: record.status,
        exit_code: record.exitCode,
        command_hash: record.commandHash,
        updated_at: nowIso(context),
      }
      await db
        .insertInto('workspace_setups')
        .values(values)
        .onConflict((conflict) =>
          conflict.columns(['workspace_id', 'target']).doUpdateSet({
            dir: values.dir,
            status: values.status,
            exit_code: values.exit_code,
            command_hash: values.command_hash,
            updated_at: values.updated_at,
          }),
        )
        .execute()
    },

    async approval(project: string): Promise<ConfigApproval | undefined> {
      const row = await db
        .selectFrom('workspace_config_approvals')
        .selectAll()
        .where('project', '=', project)
        .executeTakeFirst()
      return (
        row && {
          project: row.project,
          contentHash: row.content_hash,
          approvedBy: row.approved_by,
          approvedAt: row.approved_at,
        }
      )
    },

    async approve(project: string, contentHash: string, userId: string): Promise<ConfigApproval> {
      const approvedAt = nowIso(context)
      await db
        .insertInto('workspace_config_approvals')
        .values({ project, content_hash: contentHash, approved_by: userId, approved_at: approvedAt })
        .onConflict((conflict) =>
          conflict
            .column('project')
            .doUpdateSet({ content_hash: contentHash, approved_by: userId, approved_at: approvedAt }),
        )
        .execute()
      return { project, contentHash, approvedBy: userId, approvedAt }
    },
  }
}

export type WorkspaceLifecycleRepository = ReturnType<typeof createWorkspaceLifecycleRepository>
