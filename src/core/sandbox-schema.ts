// The `sandbox:` settings of a profile (and a project's default): how far a run's agent is confined
// (src/sandbox/ does it with bubblewrap). Pure: no I/O; paths are checked for shape here and against the
// data dir and the file system when a run starts.
import { z } from 'zod'

/** `off`: the agent runs with the daemon user's rights; `workspace`: it sees its workspace and the proxy only. */
export const SANDBOX_MODES = ['off', 'workspace'] as const
export type SandboxMode = (typeof SANDBOX_MODES)[number]

export const SandboxModeSchema = z.enum(SANDBOX_MODES, {
  error: () => 'expected "off" or "workspace"',
})

/**
 * The sandbox a profile saved through the UI or API gets when its definition names none: a new profile runs
 * in `workspace`; one already stored keeps what it had — an explicit mode, or none at all (then its project's
 * default, else `off`, as before sandboxes existed), so a full replace that leaves the key out never loosens it.
 */
export function withDefaultSandbox<T extends { sandbox?: SandboxMode | undefined }>(
  definition: T,
  stored: { sandbox?: unknown } | undefined,
): T {
  if (definition.sandbox !== undefined) return definition
  if (!stored) return { ...definition, sandbox: 'workspace' }
  const kept = SandboxModeSchema.safeParse(stored.sandbox)
  return kept.success ? { ...definition, sandbox: kept.data } : definition
}

/** Why a sandbox path is refused, or undefined. `~/` is the daemon user's home. */
export function sandboxPathProblem(value: string): string | undefined {
  if (!value.startsWith('/') && !value.startsWith('~/'))
    return `"${value}" is not absolute: give a path that starts with "/" or "~/"`
  if (value.split('/').some((segment) => segment === '..')) return `"${value}": ".." is refused`
  if (/[\0\n]/.test(value)) return `"${value}": control characters are refused`
  return undefined
}

const sandboxPath = z.string().superRefine((value, context) => {
  const problem = sandboxPathProblem(value)
  if (problem) context.addIssue({ code: 'custom', message: problem })
})

const writablePath = sandboxPath.refine(
  (value) => value.replace(/\/+$/, '') !== '' && value.replace(/\/+$/, '') !== '~',
  'the whole root or home cannot be writable: name the directory the agent needs',
)

export const SandboxPathsSchema = z.strictObject({
  /** Shown read-only (the rest of `/` already is, but the daemon user's home and data dir are hidden). */
  readOnly: z.array(sandboxPath).default([]),
  /** Bound read-write (a cache directory, a toolchain's state). */
  writable: z.array(writablePath).default([]),
})

const HOST_PATTERN =
  /^(\*\.)?[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:\d{1,5})?$/

export const SandboxHostsSchema = z.array(
  z
    .string()
    .regex(
      HOST_PATTERN,
      'expected a host name such as "registry.npmjs.org", "*.pypi.org" or "proxy.example.com:8443"',
    ),
)

export type SandboxPathsConfig = z.output<typeof SandboxPathsSchema>
