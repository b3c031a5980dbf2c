// GET /api/nodes: the daemons sharing this store — alive (heartbeat within the lease), stopped (a clean
// stop) or lost (lease expired: their unfinished runs were marked interrupted) — and what each runs now.
import type { Hono } from 'hono'
import type { RuntimeServices, ServerDeps } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'

export function registerNodeRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { store: ServerDeps['store']; info: ServerDeps['info']; runtime: Pick<RuntimeServices, 'config'> },
): void {
  app.get('/api/nodes', async (context) => {
    const since = Date.now() - deps.runtime.config.server.leaseMs
    const nodes = await deps.store.nodes.list()
    return context.json(
      await Promise.all(
        nodes.map(async (node) => ({
          ...node,
          state: node.stoppedAt ? 'stopped' : Date.parse(node.heartbeatAt) >= since ? 'alive' : 'lost',
          self: node.id === deps.info.nodeId,
          activeRuns: (await deps.store.runQueue.activeOnNode(node.id)).length,
        })),
      ),
    )
  })
}
