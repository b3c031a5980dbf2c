// The built-in agent's tools. Read tools run at once; write tools never run when the model calls them:
// they describe what they would do (a proposal with a summary, a diff and a classification), and only
// `apply` — after a person confirmed, or a profile auto-approved the classification — changes anything.
import type { z } from 'zod'
import type { WriteClassification } from '../../core/events.js'

export interface ToolContext {
  /** The run's workspace: every path is resolved inside it, symlinks included. */
  workspace: string
  signal?: AbortSignal
  /**
   * Called (awaited) with the process group of a command that is spawned but not started yet: the
   * caller records it, so a restarted daemon can kill what a crash left running. If it throws, the
   * command never starts.
   */
  beforeCommandStarts?: (pgid: number) => Promise<void>
  /** Variables the workspace's commands get on top of their environment (HANGAR_PORT, HANGAR_PORT_COUNT). */
  variables?: Readonly<Record<string, string>>
  /** The profile's sandbox around a command (src/sandbox/): bubblewrap's argv around the shell's. */
  wrapCommand?: (command: string, args: string[]) => { command: string; args: string[] }
}

/** What the model gets back from a tool call. */
export interface ToolOutput {
  content: string
  isError?: boolean
}

export interface Proposal {
  /** One line for a person: "Create src/app.ts (12 lines)". */
  summary: string
  /** A unified diff where there is one. */
  diff?: string
  classification: WriteClassification
  /**
   * What must still hold when it is applied: the target's content hash at proposal time (null = the
   * file did not exist). A mismatch at apply time is a conflict, never a silent overwrite.
   */
  precondition: { path: string; sha256: string | null } | null
}

interface ToolBase<Input> {
  name: string
  description: string
  inputSchema: z.ZodType<Input>
}

export interface ReadTool<Input = unknown> extends ToolBase<Input> {
  kind: 'read'
  run(input: Input, context: ToolContext): Promise<ToolOutput>
}

export interface WriteTool<Input = unknown> extends ToolBase<Input> {
  kind: 'write'
  /** Describes the change without making it. Errors (bad path, missing file) are model-readable outputs. */
  propose(input: Input, context: ToolContext): Promise<Proposal | ToolOutput>
  /** Makes the change; throws a ToolConflict when the precondition no longer holds. */
  apply(input: Input, context: ToolContext, proposal: Proposal): Promise<ToolOutput>
}

export type ToolDefinition<Input = unknown> = ReadTool<Input> | WriteTool<Input>

/** The target changed between proposal and apply: the model must re-read and propose again. */
export class ToolConflict extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ToolConflict'
  }
}
