// What `npm run fuzz` checks: the shape of each answer, the store before and after, and a local upstream
// sink standing in for every model provider (it answers each family's 400 error and counts requests).
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import { openSqliteFile } from '../dist/src/store/sqlite-driver.js'

/** A loopback "provider" that refuses everything in the caller's family shape. */
export async function startSink() {
  let requests = 0
  const server = createServer((request, response) => {
    requests++
    request.resume()
    request.on('end', () => {
      // Each family's upstream is mounted under its own prefix, so the answer takes its caller's shape.
      const url = request.url ?? ''
      const body = url.startsWith('/gemini')
        ? { error: { code: 400, message: 'sink: bad request', status: 'INVALID_ARGUMENT' } }
        : url.startsWith('/anthropic')
          ? { type: 'error', error: { type: 'invalid_request_error', message: 'sink: bad request' } }
          : { error: { message: 'sink: bad request', type: 'invalid_request_error' } }
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

// The proxy's request log with its per-minute sums (and each node's heartbeat) may change; nothing else may. Columns that record
// a credential's last use change on every authenticated request and are not state a caller controls.
const VOLATILE_TABLES = new Set([
  'proxy_requests',
  'proxy_spend',
  'proxy_usage',
  'nodes',
  'kysely_migration',
  'kysely_migration_lock',
])
const VOLATILE_COLUMNS = /^(last_used_at|last_seen_at|heartbeat_at|updated_at)$/

/** A digest per row of every table, keyed by table. */
export function storeSnapshot(dbFile) {
  const db = openSqliteFile(dbFile, { readonly: true, fileMustExist: true })
  try {
    const tables = db
      .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
      .all()
      .map((row) => row.name)
      .filter((name) => !VOLATILE_TABLES.has(name))
    const snapshot = {}
    for (const table of tables) {
      const rows = db.prepare(`select * from "${table}"`).all()
      snapshot[table] = rows
        .map((row) => {
          const kept = Object.entries(row).filter(([column]) => !VOLATILE_COLUMNS.test(column))
          return createHash('sha256').update(JSON.stringify(kept)).digest('hex')
        })
        .sort()
    }
    return snapshot
  } finally {
    db.close()
  }
}

export function diffSnapshots(before, after) {
  const changes = []
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const old = new Set(before[table] ?? [])
    const now = new Set(after[table] ?? [])
    const added = [...now].filter((digest) => !old.has(digest)).length
    const removed = [...old].filter((digest) => !now.has(digest)).length
    if (added || removed)
      changes.push(`${table}: ${added} row(s) added or changed, ${removed} removed or changed`)
  }
  return changes
}

function parseJson(text) {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isApiEnvelope = (body) =>
  typeof body?.error?.code === 'string' && typeof body.error.message === 'string' && 'retryable' in body.error
const SHAPES = {
  api: isApiEnvelope,
  anthropic: (body) => body?.type === 'error' && typeof body.error?.message === 'string',
  openai: (body) => typeof body?.error?.message === 'string',
  gemini: (body) => typeof body?.error?.message === 'string' && typeof body.error.code === 'number',
}

/** JSON-RPC answers may arrive as JSON or as one SSE message. */
function mcpMessages(answer) {
  if (answer.headers.get('content-type')?.includes('text/event-stream')) {
    return answer.body
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => parseJson(line.slice(5)))
  }
  const body = parseJson(answer.body)
  return Array.isArray(body) ? body : [body]
}

/** Why an answer is wrong, or null when it is the 4xx (or JSON-RPC error) it should be. */
export function checkAnswer(fuzzCase, answer) {
  if (answer.status === 0) return `no answer (${answer.body})`
  if (answer.status >= 500) return `server error: ${answer.body.slice(0, 200)}`
  if (/\n\s+at .+:\d+:\d+/.test(answer.body)) return 'a stack trace in the answer'
  if (fuzzCase.expect === 'mcp') {
    if (answer.status >= 400 && answer.status < 500) {
      const body = parseJson(answer.body)
      return isApiEnvelope(body) || typeof body?.error?.code === 'number' || answer.body === ''
        ? null
        : `4xx without a JSON-RPC or API error: ${answer.body.slice(0, 120)}`
    }
    const messages = mcpMessages(answer)
    const refused =
      messages.length > 0 && messages.every((message) => message?.error || message?.result?.isError)
    return refused ? null : `MCP ${answer.status} that is not an error: ${answer.body.slice(0, 160)}`
  }
  if (answer.status < 400) return `accepted (${answer.status}): ${answer.body.slice(0, 160)}`
  const body = parseJson(answer.body)
  if (body === undefined) return `4xx that is not JSON: ${answer.body.slice(0, 120)}`
  const shape =
    fuzzCase.expect === 'any'
      ? Object.values(SHAPES).some((check) => check(body))
      : SHAPES[fuzzCase.expect](body)
  return shape ? null : `4xx not in the ${fuzzCase.expect} error shape: ${answer.body.slice(0, 160)}`
}
