// The built-in agent's workspace tools, in the order the model sees them: reading first, then changes.
import { deleteFileTool } from './delete-file-tool.js'
import { editFileTool } from './edit-file-tool.js'
import { globTool } from './glob-tool.js'
import { grepTool } from './grep-tool.js'
import { listFilesTool } from './list-files-tool.js'
import { readFileTool } from './read-file-tool.js'
import type { RunCommandToolOptions } from './run-command-tool.js'
import { createRunCommandTool } from './run-command-tool.js'
import type { ToolDefinition } from './types.js'
import { writeFileTool } from './write-file-tool.js'

export interface WorkspaceToolsOptions {
  /** The environment of run_command; defaults to the safe subset of the daemon's (see commandEnvironment). */
  commandEnvironment?: NodeJS.ProcessEnv
}

export function createWorkspaceTools(options: WorkspaceToolsOptions = {}): ToolDefinition[] {
  const runCommandOptions: RunCommandToolOptions = options.commandEnvironment
    ? { environment: options.commandEnvironment }
    : {}
  return [
    listFilesTool,
    readFileTool,
    globTool,
    grepTool,
    writeFileTool,
    editFileTool,
    deleteFileTool,
    createRunCommandTool(runCommandOptions),
  ]
}
