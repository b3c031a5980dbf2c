// GitHub Copilot CLI (`copilot`): JSONL events, the profile's permissions as --allow-tool/--deny-tool (in
// prompt mode anything not allowed is denied; by default only file writes are allowed). We spawn the native binary, never the npm launcher: the launcher runs it with spawnSync and
// does not forward signals, so a SIGTERM orphans the real process. An endpoint is BYOK through the
// COPILOT_PROVIDER_* variables, with COPILOT_OFFLINE so nothing else is contacted.
import { access } from 'node:fs/promises'
import path from 'node:path'
import { ADAPTER_PERMISSIONS, effectivePermissions, type PermissionsConfig } from '../../core/permissions.js'
import { createCopilotStreamParser } from '../parsers/copilot-stream.js'
import {
  ADAPTER_SPECIFICATION_VERSION,
  type AdapterDef,
  type LaunchInput,
  type ModelEndpoint,
  type ResolvedExecutable,
} from '../types.js'
import {
  childEnvironment,
  configDirectory,
  firstSetVariable,
  firstVersion,
  isRecord,
  realFile,
  spawnCommand,
  uuidFromSeed,
  withoutVersionSuffix,
  withVersionSuffix,
  optionalFlag,
} from './launch-helpers.js'

const DEFAULT_MODELS = { anthropic: 'claude-sonnet-4.5', openai: 'gpt-5.4' } as const

async function isFile(file: string): Promise<boolean> {
  try {
    await access(file)
    return true
  } catch {
    return false
  }
}

/** The platform packages the launcher itself would try, in its order (musl first only on musl). */
function platformPackages(): string[] {
  const platforms = process.platform === 'linux' ? ['linux', 'linuxmusl'] : [process.platform]
  return platforms.map((platform) => `copilot-${platform}-${process.arch}`)
}

/** Finds `@github/copilot-<platform>-<arch>/copilot` for the launcher at `found` (npm nests or hoists it). */
export async function resolveCopilotExecutable(found: string): Promise<ResolvedExecutable> {
  const real = await realFile(found)
  // A standalone install is the native binary already.
  if (!/\.(?:c|m)?js$/.test(real)) return { path: real }
  const packageDirectory = path.dirname(real)
  for (const name of platformPackages()) {
    const candidates = [
      path.join(packageDirectory, 'node_modules', '@github', name, 'copilot'),
      path.join(packageDirectory, '..', name, 'copilot'),
    ]
    for (const candidate of candidates) {
      if (await isFile(candidate)) return { path: path.resolve(candidate) }
    }
  }
  throw new Error(
    `cannot find Copilot's native binary next to ${real} (expected @github/${platformPackages()[0]}); reinstall @github/copilot`,
  )
}

function providerVariables(endpoint: ModelEndpoint, model: string | undefined): Record<string, string> {
  const anthropic = endpoint.family === 'anthropic'
  const variables: Record<string, string> = {
    // Anthropic-type base URLs carry no /v1; OpenAI-type ones do.
    COPILOT_PROVIDER_BASE_URL: anthropic
      ? withoutVersionSuffix(endpoint.baseUrl)
      : withVersionSuffix(endpoint.baseUrl),
    COPILOT_PROVIDER_TYPE: anthropic ? 'anthropic' : 'openai',
    // BYOK requires a model name.
    COPILOT_MODEL: model ?? (anthropic ? DEFAULT_MODELS.anthropic : DEFAULT_MODELS.openai),
    // No GitHub sign-in, telemetry, web tools, GitHub MCP server or update check.
    COPILOT_OFFLINE: 'true',
  }
  if (!anthropic) {
    variables.COPILOT_PROVIDER_WIRE_API = endpoint.family === 'openai-responses' ? 'responses' : 'completions'
  }
  if (endpoint.apiKey !== undefined) variables.COPILOT_PROVIDER_API_KEY = endpoint.apiKey
  return variables
}

/**
 * strict: nothing allowed (reads in the working directory need no permission); workspace: `write` (file
 * tools; paths stay limited to the working directory); permissive: every tool. Values attached with `=`:
 * the flags are variadic.
 */
export function copilotPermissionArgs(permissions: PermissionsConfig | undefined): string[] {
  const { mode, allowedTools = [], deniedTools = [] } = effectivePermissions(permissions)
  const base =
    mode === 'permissive' ? ['--allow-all-tools'] : mode === 'workspace' ? ['--allow-tool=write'] : []
  return [
    ...base,
    ...allowedTools.map((tool) => `--allow-tool=${tool}`),
    ...deniedTools.map((tool) => `--deny-tool=${tool}`),
  ]
}

function copilotEnvironment(input: LaunchInput): Record<string, string> {
  const environment = childEnvironment(input)
  environment.COPILOT_AUTO_UPDATE = 'false'
  if (input.endpoint) {
    Object.assign(environment, providerVariables(input.endpoint, input.model ?? input.endpoint.model))
  }
  return environment
}

export const copilotAdapter = {
  specificationVersion: ADAPTER_SPECIFICATION_VERSION,
  id: 'copilot',
  displayName: 'GitHub Copilot CLI',
  binaries: ['copilot'],
  configDir: '.copilot',
  versionArgs: ['--version'],
  parseVersion: firstVersion,
  resolveExecutable: (found) => resolveCopilotExecutable(found),
  capabilities: {
    streaming: true,
    resume: true,
    surgicalEdit: true,
    nativeSkillLoading: false,
    // What Hangar can hold it to (src/core/permissions.ts, one table for the mapping and the checks).
    permissionMode: ADAPTER_PERMISSIONS.copilot.enforces,
    contextWindowHint: null,
  },
  // Copilot reads AGENTS.md as custom instructions; its .github/skills load only in a trusted folder.
  skills: { kind: 'file', file: 'AGENTS.md' },
  endpointFamilies: ['openai-chat', 'openai-responses', 'anthropic'],
  verified: true,
  // test/clis/package.json pins @github/copilot 1.0.102.
  testedVersions: '~1.0.102',

  async probeAuth(input) {
    const variable = firstSetVariable(input.env, ['COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN'])
    if (variable) return { state: 'ok', source: variable }
    const directory = configDirectory(input, 'COPILOT_HOME', '.copilot')
    const configFile = path.join(directory, 'config.json')
    const config = await input.readJson(configFile)
    if (isRecord(config)) {
      const users = config.loggedInUsers ?? config.logged_in_users
      const last = config.lastLoggedInUser ?? config.last_logged_in_user
      if ((Array.isArray(users) && users.length > 0) || isRecord(last))
        return { state: 'ok', source: configFile }
    }
    const hint = 'run `copilot` and /login, or set COPILOT_GITHUB_TOKEN'
    // The token itself may sit in the system keychain; without Copilot's own state dir there is none.
    if (!(await input.exists(directory))) return { state: 'missing', hint }
    return { state: 'unknown', hint }
  },

  buildLaunch(input) {
    const sessionId = input.resumeSessionId ?? uuidFromSeed(`copilot-session:${input.runDir}`)
    const model = input.endpoint ? undefined : input.model
    const args = [
      '--output-format',
      'json',
      ...copilotPermissionArgs(input.permissions),
      '--no-ask-user',
      '--no-auto-update',
      '--disable-client-telemetry',
      '--no-remote',
      ...optionalFlag('--model', model),
      // The value must be attached: a bare --resume opens the session picker. A new session gets an id
      // chosen here: Copilot names its session only in its last line, which an interrupted run never prints.
      input.resumeSessionId === undefined ? `--session-id=${sessionId}` : `--resume=${input.resumeSessionId}`,
      ...input.extraArgs,
    ]
    return {
      ...spawnCommand(input.executable, args),
      env: copilotEnvironment(input),
      stdin: input.prompt,
      files: [],
      sessionId,
    }
  },

  createParser: (context) => createCopilotStreamParser(context),
} satisfies AdapterDef
