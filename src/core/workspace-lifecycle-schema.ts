// The workspace lifecycle of a project (issue 20 item 5): what a new workspace gets before the agent's
// first turn. The same shape in hangar.yaml (`projects.<name>.workspace`) and in a repository's committed
// `.hangar/workspace.yaml` (which runs only once the owner approved its exact content). Pure: no I/O.
import { z } from 'zod'
import { SandboxModeSchema } from './sandbox-schema.js'

/** Why a copy glob is refused, or undefined: globs stay relative and inside the project. */
export function copyGlobProblem(glob: string): string | undefined {
  if (glob.startsWith('/') || /^[A-Za-z]:[\\/]/.test(glob))
    return 'an absolute path is refused: give a glob relative to the project, e.g. ".env*"'
  if (glob.includes('\\')) return 'use "/" between directories'
  if (glob.split('/').some((segment) => segment === '..'))
    return '".." is refused: copied files come from inside the project'
  if (glob.split('/').some((segment) => segment === '.git'))
    return '".git" is refused: git metadata is never copied'
  return undefined
}

const copyGlob = z
  .string()
  .min(1, 'expected a glob such as ".env*"')
  .superRefine((glob, context) => {
    const problem = copyGlobProblem(glob)
    if (problem) context.addIssue({ code: 'custom', message: `"${glob}": ${problem}` })
  })

const command = z.string().trim().min(1, 'expected a shell command, e.g. "npm ci"')

export const WorkspaceLifecycleSchema = z.strictObject({
  /** Git-ignored files of the project (`.env*`, local config) copied into each new workspace. */
  copy: z.array(copyGlob).default([]),
  /** Run in the workspace (on its host for an SSH target) before its first agent turn. */
  setup: command.optional(),
  /** Run in the workspace when it is removed. */
  teardown: command.optional(),
  /** Ports given to each workspace: HANGAR_PORT … HANGAR_PORT+N-1 (and HANGAR_PORT_COUNT=N). */
  ports: z.int('expected a whole number of ports').min(0).max(100, 'at most 100 ports').default(0),
})

export type WorkspaceLifecycleConfig = z.output<typeof WorkspaceLifecycleSchema>

/** `projects.<name>`: per-project settings of hangar.yaml. */
export const ProjectSettingsSchema = z.strictObject({
  workspace: WorkspaceLifecycleSchema.optional(),
  /** Run in each attempt's workspace after its agent finished (`npm test`); its exit code is shown. */
  check: command.optional(),
  /** The project's default for profiles that do not set `sandbox` (src/sandbox/). */
  sandbox: SandboxModeSchema.optional(),
})

/** The file a repository may commit instead (approved by the owner before it runs). */
export const WORKSPACE_FILE = '.hangar/workspace.yaml'
