// The agent's tools by name. Built once at boot: a duplicate name or a schema that cannot be sent to a
// model is a programmer error and throws there, not in the middle of a run.
import { z } from 'zod'
import type { LlmTool } from '../../providers/types.js'
import type { ToolDefinition } from './types.js'

export type InputValidation<Input> = { ok: true; value: Input } | { ok: false; message: string }

export interface ToolRegistry {
  list(): readonly ToolDefinition[]
  get(name: string): ToolDefinition | undefined
  /** Name, description and JSON Schema of every tool, in registration order, as the providers send them. */
  toLlmTools(): LlmTool[]
  validateInput<Input>(tool: ToolDefinition<Input>, input: unknown): InputValidation<Input>
}

/** What both Anthropic and OpenAI accept as a tool name. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** The JSON Schema of what the model must send: `io: 'input'` keeps fields with defaults optional. */
export function toInputJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, { io: 'input' }) as Record<
    string,
    unknown
  >
  return jsonSchema
}

function formatIssuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'the input'
  return path
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`,
    )
    .join('')
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined
    current = (current as Record<PropertyKey, unknown>)[segment]
  }
  return current
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const field = formatIssuePath(issue.path)
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined && issue.path.length > 0) {
    return `${field}: missing; it is required (expected ${issue.expected})`
  }
  return `${field}: ${issue.message}`
}

/**
 * Parses a model's tool input. On failure the message lists every wrong field and tells the model to
 * call the tool again, so a bad call costs one turn instead of failing the run.
 */
export function validateInput<Input>(tool: ToolDefinition<Input>, input: unknown): InputValidation<Input> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const shape = toInputJsonSchema(tool.inputSchema).properties
    const fields = shape && typeof shape === 'object' ? Object.keys(shape).join(', ') : ''
    return {
      ok: false,
      message: `The input of ${tool.name} must be a JSON object${fields ? ` with the fields ${fields}` : ''}; call ${tool.name} again with an object.`,
    }
  }
  const parsed = tool.inputSchema.safeParse(input)
  if (parsed.success) return { ok: true, value: parsed.data }
  const problems = parsed.error.issues.map((issue) => `- ${describeIssue(issue, input)}`)
  return {
    ok: false,
    message: `Invalid input for ${tool.name}:\n${problems.join('\n')}\nCall ${tool.name} again with the input corrected.`,
  }
}

export function createToolRegistry(tools: readonly ToolDefinition[]): ToolRegistry {
  const byName = new Map<string, ToolDefinition>()
  const llmTools: LlmTool[] = []
  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name)) {
      throw new Error(`Tool name "${tool.name}" is invalid: use 1 to 64 letters, digits, "_" or "-".`)
    }
    if (byName.has(tool.name))
      throw new Error(`Duplicate tool name "${tool.name}": every tool needs its own name.`)
    const inputSchema = toInputJsonSchema(tool.inputSchema)
    if (inputSchema.type !== 'object') {
      throw new Error(
        `Tool "${tool.name}" must take an object as input (its schema is ${String(inputSchema.type)}).`,
      )
    }
    byName.set(tool.name, tool)
    llmTools.push({ name: tool.name, description: tool.description, inputSchema })
  }
  const list = [...byName.values()]
  return {
    list: () => list,
    get: (name) => byName.get(name),
    toLlmTools: () => llmTools.map((tool) => ({ ...tool, inputSchema: structuredClone(tool.inputSchema) })),
    validateInput,
  }
}
