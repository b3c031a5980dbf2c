// What the MCP SDK's transport gets wrong on malformed input, answered here before it sees the body:
// invalid UTF-8 (it would decode it to U+FFFD and go on), an empty batch (it answers 202 as if it held
// only notifications; JSON-RPC says Invalid Request), and a known method with bad params (its handler
// wrapper turns the zod error into -32603 Internal error with the issues dumped as JSON; JSON-RPC says
// -32602 Invalid params, and one readable line is enough). Anything else goes to the SDK unchanged.
import { ClientRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { decodeUtf8 } from '../request-body.js'

const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const INVALID_PARAMS = -32602

type JsonRpcId = string | number | null

interface JsonRpcError {
  jsonrpc: '2.0'
  id: JsonRpcId
  error: { code: number; message: string }
}

export type McpBodyCheck = { ok: true; body: unknown } | { ok: false; answer: JsonRpcError | JsonRpcError[] }

/** The request schema of every method a client may call, by method name. */
const REQUEST_SCHEMAS = new Map<string, (typeof ClientRequestSchema.options)[number]>(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]),
)

function errorOf(id: JsonRpcId, code: number, message: string): JsonRpcError {
  return { jsonrpc: '2.0', id, error: { code, message } }
}

function idOf(message: Record<string, unknown>): JsonRpcId {
  const id = message.id
  return typeof id === 'string' || typeof id === 'number' ? id : null
}

/** The first problem of a request's params as `Invalid params for <method>: <path>: <what>`, or undefined. */
function paramsProblem(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null || !('id' in message)) return undefined
  const { jsonrpc, method, params } = message as { jsonrpc?: unknown; method?: unknown; params?: unknown }
  // Not a JSON-RPC request at all: the SDK refuses that itself (-32700).
  if (jsonrpc !== '2.0' || typeof method !== 'string') return undefined
  const schema = REQUEST_SCHEMAS.get(method)
  if (!schema) return undefined
  const parsed = schema.safeParse({ method, params })
  if (parsed.success) return undefined
  const issue = parsed.error.issues[0]!
  const where = issue.path.map(String).join('.') || 'params'
  return `Invalid params for ${method}: ${where}: ${issue.message.replaceAll(/\s+/g, ' ')}`
}

/** Decodes and checks a POSTed MCP body; the parsed JSON when the SDK may take it from here. */
export function checkMcpBody(bytes: Uint8Array): McpBodyCheck {
  const text = decodeUtf8(bytes)
  if (text === undefined) {
    const message = 'Parse error: the request body is not valid UTF-8; send the JSON encoded as UTF-8'
    return { ok: false, answer: errorOf(null, PARSE_ERROR, message) }
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    // As the SDK answers it (the body is read here, so the SDK cannot).
    return { ok: false, answer: errorOf(null, PARSE_ERROR, 'Parse error: Invalid JSON') }
  }
  const messages = Array.isArray(body) ? body : [body]
  if (messages.length === 0) {
    const message = 'Invalid Request: the batch is empty; send one JSON-RPC message or a non-empty array'
    return { ok: false, answer: errorOf(null, INVALID_REQUEST, message) }
  }
  const problems = messages.map(paramsProblem)
  if (problems.every((problem) => problem === undefined)) return { ok: true, body }
  // Nothing of a batch runs when one request in it is malformed; each request still gets an answer.
  const answers = messages.flatMap((message: unknown, index): JsonRpcError[] => {
    if (typeof message !== 'object' || message === null || !('id' in message)) return []
    const id = idOf(message as Record<string, unknown>)
    const problem = problems[index]
    return [
      problem === undefined
        ? errorOf(
            id,
            INVALID_REQUEST,
            'Invalid Request: not run, another request of this batch has invalid params',
          )
        : errorOf(id, INVALID_PARAMS, problem),
    ]
  })
  return { ok: false, answer: Array.isArray(body) ? answers : answers[0]! }
}
