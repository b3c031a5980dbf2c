import type { Hono } from 'hono'
import type { ServerDeps } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'

export function registerHealthRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: Pick<ServerDeps, 'info' | 'credentials' | 'store'>,
): void {
  app.get('/api/health', async (context) => {
    let database: 'ok' | 'unavailable' = 'ok'
    try {
      await deps.store.users.count()
    } catch {
      database = 'unavailable'
    }
    return context.json(
      {
        status: database === 'ok' ? 'ok' : 'degraded',
        version: deps.info.version,
        nodeId: deps.info.nodeId,
        engine: deps.store.engine,
        database,
        vault: deps.credentials.vaultAvailable ? 'ok' : 'unavailable',
        uptimeSeconds: Math.round((Date.now() - deps.info.startedAt.getTime()) / 1000),
      },
      database === 'ok' ? 200 : 503,
    )
  })
}
