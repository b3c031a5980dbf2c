// The adapter contract (adapter-v1). An adapter is data plus pure functions: how to find, launch, talk
// to and parse one agent CLI. One supervisor spawns them all; one parser per output format.
import type { AdapterCapabilities } from '../core/api-types.js'
import type { AdapterId } from '../core/adapter-ids.js'
import type { AgentEvent, UsageTotals } from '../core/events.js'
import type { PermissionsConfig } from '../core/permissions.js'

export const ADAPTER_SPECIFICATION_VERSION = 'adapter-v1' as const

/** The wire format a CLI's model traffic uses; the proxy has one route per family. */
export type ModelFamily = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini'

/**
 * Where a run's model traffic goes. The proxy (a later milestone) swaps `baseUrl` for its own URL; every
 * adapter reads the endpoint from here only, so that stays one seam.
 * `baseUrl` conventions: anthropic without `/v1`, openai-* with `/v1`, gemini the API root.
 */
export interface ModelEndpoint {
  family: ModelFamily
  baseUrl: string
  apiKey?: string
  model?: string
}

export type { AdapterCapabilities }

/** How skills reach the agent: copied into its native folder, placed as an instruction file, or prompted. */
export type SkillStrategy =
  { kind: 'native'; directory: string } | { kind: 'file'; file: string } | { kind: 'prompt' }

/** What detection resolved: the file to execute (and the interpreter, when it needs a special one). */
export interface ResolvedExecutable {
  /** Absolute path of what to spawn (a native binary, or a script run by `interpreter`). */
  path: string
  /** e.g. a Node 24 for OpenClaw; absent = spawn `path` directly. */
  interpreter?: string
}

export interface LaunchInput {
  prompt: string
  /** The workspace: the agent's cwd. */
  cwd: string
  model?: string | undefined
  endpoint?: ModelEndpoint | undefined
  /** The CLI's own session id to continue (from an earlier run's `run-end.sessionId`). */
  resumeSessionId?: string | undefined
  /** A private per-run directory (settings files, TMPDIR); removed after the run. */
  runDir: string
  /** HOME for the CLI: the user's own by default (their login lives there), or an isolated one. */
  home: string
  isolatedHome: boolean
  /** The base environment (already without Hangar's own secrets). */
  env: Readonly<Record<string, string | undefined>>
  /** The profile's `permissions` (absent = the default mode); each adapter maps them to its flags. */
  permissions?: PermissionsConfig | undefined
  /** Profile `cliArgs`, passed as they are. */
  extraArgs: readonly string[]
  executable: ResolvedExecutable
  /**
   * Upper bound for CLIs that need one (OpenClaw has no turn limit), derived from the profile's `timeout`
   * (runs/run-limits.ts, a backstop behind Hangar's own clock); 0 = none.
   */
  timeoutSeconds: number
}

export interface LaunchFile {
  /** Absolute path; only inside `runDir` or an isolated `home`, never the user's own config. */
  path: string
  content: string
  mode?: number
}

export interface LaunchPlan {
  command: string
  args: string[]
  /** The complete environment of the child. */
  env: Record<string, string>
  /** Written to stdin, then closed; null closes stdin at once. */
  stdin: string | null
  /** Written before spawning. */
  files: LaunchFile[]
  /**
   * The session id this launch uses when the adapter chose it itself (OpenClaw's and Copilot's
   * `--session-id`), so it is known before the CLI prints anything; the parser reports it from the start.
   */
  sessionId?: string
}

export interface ParserOutcome {
  /** The CLI's own final event was seen (a run without it was cancelled or crashed, whatever the exit code). */
  completed: boolean
  /** The final event reports a failed turn (API error, auth error…). */
  failure?: { code: string; message: string }
  /** The CLI's session id, for resume. */
  sessionId?: string
  /** Totals the CLI reported itself (used when the run was not proxied). */
  usage?: UsageTotals
}

export interface StreamParser {
  /** One stdout line without its newline. Returns events in order. Never throws. */
  line(text: string): AgentEvent[]
  /**
   * The CLI's session id as soon as the stream (or the launch) revealed it, before the run ends: a run
   * interrupted after this point can still be resumed.
   */
  sessionId(): string | undefined
  /** Called once after the process exited: trailing events and the outcome. */
  finish(): { events: AgentEvent[]; outcome: ParserOutcome }
}

export interface ParserContext {
  /** The workspace, to report `file-change` paths relative to it. */
  cwd: string
  /** The session id the launch chose up front (`LaunchPlan.sessionId`), until the stream names one. */
  sessionId?: string | undefined
}

export type AuthStateName = 'ok' | 'missing' | 'expired' | 'unknown'

export interface AuthState {
  state: AuthStateName
  /** Where the credential was found (an env var name or a file path), never its value. */
  source?: string
  /** One line telling the user how to fix it, when not ok. */
  hint?: string
}

export interface AuthProbeInput {
  env: Readonly<Record<string, string | undefined>>
  home: string
  exists(file: string): Promise<boolean>
  /** Parsed JSON, or undefined when missing or not JSON. */
  readJson(file: string): Promise<unknown>
  now: Date
}

export interface AdapterDef {
  specificationVersion: typeof ADAPTER_SPECIFICATION_VERSION
  id: Exclude<AdapterId, 'builtin'>
  displayName: string
  /** Names to look for on PATH, in order. */
  binaries: readonly string[]
  /** The CLI's config dir, relative to HOME (e.g. `.claude`). */
  configDir: string
  versionArgs: readonly string[]
  /** The version in `--version` output, or null. */
  parseVersion(output: string): string | null
  /** Maps the PATH hit to what must really be spawned (Copilot's native binary, OpenClaw under Node 24). */
  resolveExecutable?(
    found: string,
    env: Readonly<Record<string, string | undefined>>,
  ): Promise<ResolvedExecutable>
  capabilities: AdapterCapabilities
  skills: SkillStrategy
  /** The endpoint families it can be pointed at, preferred first. */
  endpointFamilies: readonly ModelFamily[]
  /** False when we could not run the real CLI (Cursor Agent): shown in `hangar agents`. */
  verified: boolean
  /**
   * The CLI versions this definition was tested with, as a semver range (`~2.1.330`); the pinned versions
   * of test/clis/package.json. A detected version outside it gets a warning (detection, `hangar agents`,
   * GET /api/agents), and a run with lines the parser does not know names it.
   */
  testedVersions: string
  probeAuth(input: AuthProbeInput): Promise<AuthState>
  /** Pure: argv, env, stdin and files for a run (a resume when `resumeSessionId` is set). */
  buildLaunch(input: LaunchInput): LaunchPlan
  createParser(context: ParserContext): StreamParser
  /** Seconds between SIGTERM and SIGKILL on cancel. */
  cancelGraceSeconds?: number
}
