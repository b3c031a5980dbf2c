// The copies of workspaces on SSH targets (one per workspace, target and key), recorded when a run ships
// a workspace and read when the workspace is removed, so the host's copy goes too. Keyed by workspace id
// (ids are global), not per user: the workspace service checks who may act before it gets here.
import { nowIso, type RepositoryContext } from './context.js'

export interface HostCopy {
  target: string
  /** The copy's name under `<remoteRoot>/workspaces`. */
  key: string
  /** The target's directory as the host resolved it. */
  remoteRoot: string
}

export function createWorkspaceHostCopiesRepository(context: RepositoryContext) {
  const { db } = context
  return {
    async record(workspaceId: string, copy: HostCopy): Promise<void> {
      const updatedAt = nowIso(context)
      await db
        .insertInto('workspace_host_copies')
        .values({
          workspace_id: workspaceId,
          target: copy.target,
          key: copy.key,
          remote_root: copy.remoteRoot,
          updated_at: updatedAt,
        })
        .onConflict((conflict) =>
          conflict
            .columns(['workspace_id', 'target', 'key'])
            .doUpdateSet({ remote_root: copy.remoteRoot, updated_at: updatedAt }),
        )
        .execute()
    },

    async of(workspaceId: string): Promise<HostCopy[]> {
      const rows = await db
        .selectFrom('workspace_host_copies')
        .select(['target', 'key', 'remote_root'])
        .where('workspace_id', '=', workspaceId)
        .orderBy('target')
        .orderBy('key')
        .execute()
      return rows.map((row) => ({ target: row.target, key: row.key, remoteRoot: row.remote_root }))
    },

    /** The copy is gone from the host. */
    async forget(workspaceId: string, copy: Pick<HostCopy, 'target' | 'key'>): Promise<void> {
      await db
        .deleteFrom('workspace_host_copies')
        .where('workspace_id', '=', workspaceId)
        .where('target', '=', copy.target)
        .where('key', '=', copy.key)
        .execute()
    },
  }
}

export type WorkspaceHostCopiesRepository = ReturnType<typeof createWorkspaceHostCopiesRepository>
