// Tool results of the MCP endpoint. A failure a caller can act on (an unknown run, a decided action, a
// path outside the project) is a tool result with `isError`, readable by the model that called it; only
// bugs are logged, and they answer with a generic message rather than their internals.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { ToolOutput } from '../../agent/tools/types.js'
import { describeError, isAppError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { PendingAction } from '../../store/repositories/actions-repository.js'

/** A JSON answer: structured for clients that read it, and the same JSON as text for those that do not. */
export function jsonResult(value: Record<string, unknown>, note?: string): CallToolResult {
  return {
    content: [
      ...(note ? [{ type: 'text' as const, text: note }] : []),
      { type: 'text', text: JSON.stringify(value, null, 2) },
    ],
    structuredContent: value,
  }
}

export function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true }
}

/** What a workspace tool told the model, as the MCP client sees it. */
export function outputResult(output: ToolOutput): CallToolResult {
  return { content: [{ type: 'text', text: output.content }], ...(output.isError && { isError: true }) }
}

/** Runs one tool call; an AppError becomes an error result, anything else is logged as a bug. */
export function createToolGuard(log: Logger) {
  return async function guard(tool: string, work: () => Promise<CallToolResult>): Promise<CallToolResult> {
    try {
      return await work()
    } catch (error) {
      if (!isAppError(error)) {
        log.error('mcp tool failed', {
          tool,
          error: error instanceof Error ? { message: error.message, stack: error.stack } : String(error),
        })
      }
      return errorResult(describeError(error))
    }
  }
}

export type ToolGuard = ReturnType<typeof createToolGuard>

/** A pending action as MCP clients see it. The tool input stays server-side: the decision is by id. */
export function toProposalView(action: PendingAction) {
  return {
    actionId: action.id,
    tool: action.tool,
    status: action.status,
    summary: action.summary,
    classification: action.classification,
    diff: action.diff,
    origin: action.origin,
    runId: action.runId,
    createdAt: action.createdAt,
    expiresAt: action.expiresAt,
    decidedAt: action.decidedAt,
    decisionReason: action.decisionReason,
    result: action.result,
  }
}
