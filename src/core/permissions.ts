// A profile's `permissions:` — how much an agent may do without a person saying yes. Runs are not
// interactive, so whatever a CLI would ask about is refused: the mode decides what it may do at all.
// Three modes, the same meaning for every adapter (each adapter maps them onto its own flags):
//   strict      read and search the workspace; no file changes, no shell commands, no web access
//   workspace   (default) also create and edit files in the workspace; still no shell or web where the
//               CLI can withhold them — the least authority that still lets an agent do its work
//   permissive  also run shell commands and other tools without asking (never a flag that switches the
//               CLI's own protections off, such as Claude's bypassPermissions)
// `allowedTools` / `deniedTools` name the CLI's own tools (or its patterns, e.g. Claude's `Bash(git *)`),
// passed to it as they are. Pure data and checks: the adapter definitions build the flags.
// No zod here (the web UI imports this file); the schema is in permissions-schema.ts.
import type { AdapterId } from './adapter-ids.js'
import type { PermissionsConfig } from './permissions-schema.js'

export type { PermissionsConfig }

export const PERMISSION_MODES = ['strict', 'workspace', 'permissive'] as const
export type PermissionMode = (typeof PERMISSION_MODES)[number]
export const DEFAULT_PERMISSION_MODE: PermissionMode = 'workspace'

export const PERMISSION_MODE_MEANINGS: Record<PermissionMode, string> = {
  strict: 'reads and searches the workspace; no file changes, shell commands or web access',
  workspace: 'also creates and edits files in the workspace; no shell commands or web access',
  permissive: 'also runs shell commands and other tools without asking',
}

/**
 * What Hangar can hold an adapter to (the `permissionMode` capability): `strict` = every mode, enforced by
 * the CLI itself; `permissive` = only `workspace` and `permissive` (it cannot be made read-only); `none` =
 * no permission setting reaches it.
 */
export type PermissionEnforcement = 'strict' | 'permissive' | 'none'

export interface AdapterPermissions {
  enforces: PermissionEnforcement
  /** Whether `allowedTools` / `deniedTools` can be passed on. */
  toolLists: boolean
  /** What each mode becomes for this CLI (shown by `hangar agents`, the API and the README). */
  mapping: Record<PermissionMode, string>
  /** Flags Hangar sets for permissions: in `cliArgs` they are refused (`--flag` and `--flag=value`). */
  reservedFlags: readonly string[]
  /** `-c key=value` overrides (Codex) of keys Hangar sets for permissions. */
  reservedConfigKeys?: readonly string[]
}

/** What Claude Code may use without asking in `permissive` mode, on top of acceptEdits. */
export const CLAUDE_PERMISSIVE_TOOLS = ['Bash', 'WebFetch', 'WebSearch'] as const

export const ADAPTER_PERMISSIONS: Record<AdapterId, AdapterPermissions> = {
  'claude-code': {
    enforces: 'strict',
    toolLists: true,
    mapping: {
      strict: '--permission-mode dontAsk',
      workspace: '--permission-mode acceptEdits',
      permissive: `--permission-mode acceptEdits --allowed-tools ${CLAUDE_PERMISSIVE_TOOLS.join(',')}`,
    },
    reservedFlags: [
      '--permission-mode',
      '--allowed-tools',
      '--allowedTools',
      '--disallowed-tools',
      '--disallowedTools',
      '--dangerously-skip-permissions',
      '--allow-dangerously-skip-permissions',
      '--permission-prompts',
    ],
  },
  codex: {
    enforces: 'strict',
    toolLists: false,
    mapping: {
      strict: 'sandbox_mode="read-only", approval_policy="never"',
      workspace: 'sandbox_mode="workspace-write", approval_policy="never" (shell confined to the workspace)',
      permissive: 'sandbox_mode="danger-full-access", approval_policy="never"',
    },
    reservedFlags: ['-s', '--sandbox', '--approve-for-me', '--dangerously-bypass-approvals-and-sandbox'],
    reservedConfigKeys: ['sandbox_mode', 'approval_policy', 'sandbox_workspace_write'],
  },
  gemini: {
    enforces: 'strict',
    toolLists: true,
    mapping: {
      strict: '--approval-mode default (no write, shell or web tools offered)',
      workspace: '--approval-mode auto_edit',
      permissive: '--approval-mode yolo',
    },
    reservedFlags: ['--approval-mode', '-y', '--yolo', '--allowed-tools'],
  },
  opencode: {
    enforces: 'strict',
    toolLists: true,
    mapping: {
      strict: 'permission: edit, bash, webfetch, websearch, external_directory denied',
      workspace: 'permission: edit allowed; bash, webfetch, websearch, external_directory denied',
      permissive: 'permission: everything allowed',
    },
    reservedFlags: ['--auto'],
  },
  copilot: {
    enforces: 'strict',
    toolLists: true,
    mapping: {
      strict: 'no --allow-tool (every tool that needs permission is refused)',
      workspace: '--allow-tool=write',
      permissive: '--allow-all-tools',
    },
    reservedFlags: ['--allow-tool', '--deny-tool', '--allow-all-tools', '--allow-all', '--yolo'],
  },
  openclaw: {
    enforces: 'strict',
    toolLists: true,
    mapping: {
      strict: 'tools.deny: write, edit, apply_patch, exec, process, code_execution, web tools',
      workspace: 'tools.deny: exec, process, code_execution, web tools',
      permissive: 'no tools denied (exec in full mode)',
    },
    reservedFlags: [],
  },
  'cursor-agent': {
    enforces: 'strict',
    toolLists: false,
    mapping: {
      strict: '--mode ask',
      workspace: 'no --force (edits in the workspace run; anything needing approval is refused)',
      permissive: '--force',
    },
    reservedFlags: ['-f', '--force', '--yolo', '--mode', '--plan'],
  },
  builtin: {
    // Hangar's own loop: every write or command is a proposal a person confirms (or `autoApprove`).
    enforces: 'strict',
    toolLists: false,
    mapping: {
      strict: 'not applicable: use autoApprove',
      workspace: 'writes and commands wait for confirmation (autoApprove)',
      permissive: 'not applicable: use autoApprove',
    },
    reservedFlags: [],
  },
}

/** The permissions a run gets: the profile's, or the default mode. */
export function effectivePermissions(permissions: PermissionsConfig | undefined): PermissionsConfig {
  return permissions ?? { mode: DEFAULT_PERMISSION_MODE }
}

/** What `hangar agents --json` and GET /api/agents say about an adapter's permissions. */
export interface PermissionsInfo {
  default: PermissionMode
  enforces: PermissionEnforcement
  toolLists: boolean
  /** What each mode becomes for this CLI. */
  modes: Record<PermissionMode, string>
}

export function permissionsInfo(adapter: AdapterId): PermissionsInfo {
  const entry = ADAPTER_PERMISSIONS[adapter]
  return {
    default: DEFAULT_PERMISSION_MODE,
    enforces: entry.enforces,
    toolLists: entry.toolLists,
    modes: entry.mapping,
  }
}

/** One line for `hangar agents`: the default mode and what it becomes for this CLI. */
export function describeDefaultPermissions(adapter: AdapterId): string {
  const entry = ADAPTER_PERMISSIONS[adapter]
  if (adapter === 'builtin') return `permissions: ${entry.mapping.workspace}`
  return `permissions: ${DEFAULT_PERMISSION_MODE} by default (${entry.mapping[DEFAULT_PERMISSION_MODE]})`
}

export interface PermissionIssue {
  path: (string | number)[]
  message: string
}

function reservedFlagOf(arg: string, flags: readonly string[]): string | undefined {
  return flags.find((flag) => arg === flag || arg.startsWith(`${flag}=`))
}

function reservedConfigKeyOf(args: readonly string[], index: number, keys: readonly string[]) {
  const arg = args[index]!
  const flagged = /^(?:-c|--config)=(.*)$/.exec(arg)
  const value = flagged ? flagged[1] : index > 0 && ['-c', '--config'].includes(args[index - 1]!) ? arg : null
  if (value == null) return undefined
  const key = value.split('=')[0]!.trim()
  return keys.find((reserved) => key === reserved || key.startsWith(`${reserved}.`))
}

/**
 * The `permissions` and `cliArgs` problems of one profile (paths relative to it): permissions an adapter
 * cannot carry, and extra args that would fight the flags Hangar sets from `permissions`.
 */
export function permissionIssues(profile: {
  adapter: AdapterId
  permissions?: PermissionsConfig | undefined
  cliArgs?: readonly string[] | undefined
}): PermissionIssue[] {
  const issues: PermissionIssue[] = []
  const entry = ADAPTER_PERMISSIONS[profile.adapter]
  const permissions = profile.permissions
  if (permissions && profile.adapter === 'builtin') {
    issues.push({
      path: ['permissions'],
      message:
        'the built-in agent asks a person to confirm each write and command: remove permissions, and use autoApprove to apply some without asking',
    })
  } else if (permissions) {
    if (permissions.mode === 'strict' && entry.enforces !== 'strict') {
      issues.push({
        path: ['permissions', 'mode'],
        message: `${profile.adapter} cannot be held to mode "strict": use "workspace" or "permissive"`,
      })
    }
    for (const key of ['allowedTools', 'deniedTools'] as const) {
      if (permissions[key] !== undefined && !entry.toolLists) {
        issues.push({
          path: ['permissions', key],
          message: `${profile.adapter} takes no per-tool permissions: remove ${key} and choose a mode (strict, workspace or permissive)`,
        })
      }
    }
  }
  const args = profile.cliArgs ?? []
  args.forEach((arg, index) => {
    const flag = reservedFlagOf(arg, entry.reservedFlags)
    const configKey = entry.reservedConfigKeys && reservedConfigKeyOf(args, index, entry.reservedConfigKeys)
    const what = flag ?? (configKey ? `-c ${configKey}` : undefined)
    if (what === undefined) return
    issues.push({
      path: ['cliArgs', index],
      message: `"${arg}" conflicts with the permission flags Hangar sets (${what}): remove it from cliArgs and use permissions: { mode: strict | workspace | permissive, allowedTools, deniedTools } instead`,
    })
  })
  return issues
}
