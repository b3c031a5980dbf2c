// The OpenAPI 3.1 description of the REST API, served at /api/openapi.json, and a readable reference at
// /api/docs (plain HTML, no external assets). Request bodies come from the same zod schemas the routes
// validate with, so the document cannot drift from what is accepted.
import { z } from 'zod'
import { OPERATIONS } from './openapi-operations.js'
import {
  PROJECT,
  REVIEW_COMMENT,
  WORKSPACE,
  WORKSPACE_DETAILS,
  WORKSPACE_REMOVAL,
} from './openapi-schemas.js'

const ERROR_ENVELOPE = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'retryable', 'details'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        retryable: { type: 'boolean' },
        details: { type: ['object', 'null'] },
      },
    },
  },
}

function bodySchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>
  return rest
}

export function createOpenApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const operation of OPERATIONS) {
    const parameters: {
      name: string
      in: string
      required: boolean
      description?: string
      schema: Record<string, unknown>
    }[] = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
      name: match[1]!,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }))
    if (operation.stream) {
      // Resume after a disconnect: the id of the last event received, as a header or (for EventSource
      // polyfills that cannot set headers) a query parameter.
      parameters.push(
        { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } },
        { name: 'lastEventId', in: 'query', required: false, schema: { type: 'string' } },
      )
    }
    for (const parameter of operation.query ?? [])
      parameters.push({ ...parameter, in: 'query', required: false })
    paths[operation.path] ??= {}
    paths[operation.path]![operation.method] = {
      summary: operation.summary,
      operationId: `${operation.method}${operation.path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+(.)?/g, (_match, next?: string) => (next ? next.toUpperCase() : ''))}`,
      ...(parameters.length > 0 && { parameters }),
      ...(operation.public ? { security: [] } : {}),
      ...(operation.body && {
        requestBody: {
          required: true,
          content: { 'application/json': { schema: bodySchema(operation.body) } },
        },
      }),
      responses: {
        '200': {
          description: 'OK',
          content: operation.stream
            ? { 'text/event-stream': { schema: { type: 'string' } } }
            : { 'application/json': { schema: operation.response ?? {} } },
        },
        default: {
          description: 'An error',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hangar API',
      version,
      description:
        'REST + SSE API of the Hangar daemon. Errors are { error: { code, message, retryable, details } }.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { session: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A personal access token (hgr_…)' },
        session: { type: 'apiKey', in: 'cookie', name: 'hangar_session' },
      },
      schemas: {
        Error: ERROR_ENVELOPE,
        Workspace: WORKSPACE,
        Project: PROJECT,
        WorkspaceDetails: WORKSPACE_DETAILS,
        WorkspaceRemoval: WORKSPACE_REMOVAL,
        ReviewComment: REVIEW_COMMENT,
      },
    },
    paths,
  }
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

export function renderApiDocs(version: string): string {
  const rows = OPERATIONS.map(
    (operation) =>
      `<tr><td><code>${operation.method.toUpperCase()}</code></td><td><code>${escapeHtml(operation.path)}</code></td><td>${escapeHtml(operation.summary)}${operation.public ? ' <em>(public)</em>' : ''}</td></tr>`,
  ).join('\n')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Hangar API ${escapeHtml(version)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;width:100%}
td{border-top:1px solid #8884;padding:.4rem;vertical-align:top}@media (prefers-color-scheme:dark){body{background:#16161a;color:#e8e8ec}}</style></head>
<body><h1>Hangar API ${escapeHtml(version)}</h1>
<p>Authenticate with <code>Authorization: Bearer hgr_…</code> (create one with <code>hangar token create</code>) or a browser session.
Errors are <code>{ "error": { "code", "message", "retryable", "details" } }</code>. The machine-readable document is <a href="/api/openapi.json">/api/openapi.json</a>.</p>
<table><tbody>${rows}</tbody></table></body></html>`
}
