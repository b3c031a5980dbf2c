// POST /api/mcp: the Model Context Protocol over Streamable HTTP, stateless. Every request gets its own
// server and transport, built for the token that sent it, so no session has to be kept, routed between
// daemons or expired; answers are plain JSON (no stream is held open).
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { Hono } from 'hono'
import { AppError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { AuthService } from '../../store/auth-service.js'
import type { Store } from '../../store/store.js'
import type { RuntimeServices } from '../app.js'
import { type AppVariables, httpGuardsOf } from '../auth-middleware.js'
import { checkCredential } from '../auth-rate-limiter.js'
import { toErrorEnvelope } from '../error-envelope.js'
import { authenticatePat } from './mcp-auth.js'
import type { checkMcpBody } from './mcp-request-check.js'
import type { createHangarMcpServer } from './mcp-server.js'

/**
 * The MCP SDK, with the schemas and validators it brings (zod-to-json-schema, ajv), is some hundred
 * modules: loaded on the first MCP request rather than at every daemon's start-up.
 */
let loading:
  | Promise<{
      Transport: typeof WebStandardStreamableHTTPServerTransport
      checkBody: typeof checkMcpBody
      createServer: typeof createHangarMcpServer
    }>
  | undefined

function loadMcp() {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('./mcp-request-check.js'),
    import('./mcp-server.js'),
  ]).then(([transport, check, server]) => ({
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    checkBody: check.checkMcpBody,
    createServer: server.createHangarMcpServer,
  }))
  return loading
}

export interface McpRouteDeps {
  auth: Pick<AuthService, 'authenticate'>
  store: Store
  runtime: RuntimeServices
  log: Logger
  version: string
}

export function registerMcpRoutes(app: Hono<{ Variables: AppVariables }>, deps: McpRouteDeps): void {
  const log = deps.log.child({ component: 'mcp' })

  app.post('/api/mcp', async (context) => {
    const header = context.req.header('authorization')
    // A request without credentials is not a guess; one with a wrong token counts towards the limit.
    const principal = header
      ? await checkCredential(context, httpGuardsOf(context), () => authenticatePat(deps.auth, header))
      : await authenticatePat(deps.auth, header)
    const { Transport, checkBody, createServer } = await loadMcp()
    // A JSON body is read and checked here (see mcp-request-check.ts); other content types go to the
    // SDK as they came, which refuses them with 415.
    let parsedBody: unknown = undefined
    if (/^application\/json\b/i.test(context.req.header('content-type') ?? '')) {
      const check = checkBody(new Uint8Array(await context.req.arrayBuffer()))
      if (!check.ok) return context.json(check.answer, 400)
      parsedBody = check.body
    }
    const server = createServer({
      principal,
      store: deps.store,
      runtime: deps.runtime,
      log: log.child({ requestId: context.get('requestId') }),
      version: deps.version,
    })
    const transport = new Transport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    await server.connect(transport)
    try {
      return await transport.handleRequest(context.req.raw, { parsedBody })
    } finally {
      // JSON mode: the answer is complete once handleRequest resolves, so nothing is cut short here.
      await server.close()
    }
  })

  // Stateless: there is no server-initiated stream to GET and no session to DELETE.
  app.on(['GET', 'DELETE'], '/api/mcp', (context) => {
    context.header('Allow', 'POST')
    const error = new AppError('invalid_request', `${context.req.method} is not supported on /api/mcp`, {
      hint: 'send MCP messages with POST; the endpoint is stateless and keeps no sessions or streams',
    })
    return context.json(toErrorEnvelope(error), 405)
  })
}
