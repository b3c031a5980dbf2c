// Codex CLI (`codex exec`): JSONL events, the prompt on stdin (`-`), the profile's permissions as the
// sandbox mode (by default writes allowed inside the workspace only), never an approval prompt. An endpoint becomes a `hangar` model provider given as `-c` overrides, its key
// in an environment variable the provider names (never in argv).
import path from 'node:path'
import { ADAPTER_PERMISSIONS, effectivePermissions, type PermissionMode } from '../../core/permissions.js'
import { createCodexStreamParser } from '../parsers/codex-stream.js'
import {
  ADAPTER_SPECIFICATION_VERSION,
  type AdapterDef,
  type LaunchInput,
  type ModelEndpoint,
} from '../types.js'
import {
  childEnvironment,
  configDirectory,
  firstSetVariable,
  firstVersion,
  isRecord,
  spawnCommand,
  withVersionSuffix,
  optionalFlag,
} from './launch-helpers.js'

export const CODEX_API_KEY_VARIABLE = 'HANGAR_CODEX_API_KEY'
const PROVIDER_ID = 'hangar'

/** `-c` values are parsed as TOML; a JSON string literal is a valid TOML basic string. */
function tomlString(value: string): string {
  return JSON.stringify(value)
}

function providerOverrides(endpoint: ModelEndpoint): string[] {
  const fields = [
    `name=${tomlString('Hangar')}`,
    `base_url=${tomlString(withVersionSuffix(endpoint.baseUrl))}`,
    ...(endpoint.apiKey === undefined ? [] : [`env_key=${tomlString(CODEX_API_KEY_VARIABLE)}`]),
    // The only wire format Codex still accepts for custom providers.
    `wire_api=${tomlString('responses')}`,
  ]
  return [
    '-c',
    `model_provider=${tomlString(PROVIDER_ID)}`,
    '-c',
    `model_providers.${PROVIDER_ID}={${fields.join(',')}}`,
  ]
}

/**
 * Codex reads files through its shell, so even `strict` keeps the shell, confined by the sandbox: read-only,
 * workspace-write (no network, writes only in the workspace), or none at all for `permissive`.
 */
const SANDBOX_BY_MODE: Record<PermissionMode, string> = {
  strict: 'read-only',
  workspace: 'workspace-write',
  permissive: 'danger-full-access',
}

function codexArgs(input: LaunchInput): string[] {
  const model = input.model ?? input.endpoint?.model
  return [
    'exec',
    // `exec resume` takes no -C/-s: the workspace is the process cwd and the sandbox a -c override.
    ...(input.resumeSessionId === undefined ? [] : ['resume', input.resumeSessionId]),
    '--json',
    '--skip-git-repo-check',
    // Plugins and analytics are what reach github.com, chatgpt.com and ab.chatgpt.com.
    '--disable',
    'plugins',
    '-c',
    'analytics.enabled=false',
    '-c',
    'check_for_update_on_startup=false',
    // `exec resume` takes no -s, so the sandbox is a -c override; nobody can answer an approval prompt.
    '-c',
    `sandbox_mode=${tomlString(SANDBOX_BY_MODE[effectivePermissions(input.permissions).mode])}`,
    '-c',
    'approval_policy="never"',
    ...(input.endpoint ? providerOverrides(input.endpoint) : []),
    ...optionalFlag('-m', model),
    ...input.extraArgs,
    // Read the prompt from stdin: exec would otherwise append whatever stdin holds to an argv prompt.
    '-',
  ]
}

export const codexAdapter = {
  specificationVersion: ADAPTER_SPECIFICATION_VERSION,
  id: 'codex',
  displayName: 'Codex CLI',
  binaries: ['codex'],
  configDir: '.codex',
  versionArgs: ['--version'],
  parseVersion: firstVersion,
  capabilities: {
    // Event-level streaming: items arrive as they happen, messages whole (no token deltas).
    streaming: true,
    resume: true,
    surgicalEdit: true,
    nativeSkillLoading: false,
    // What Hangar can hold it to (src/core/permissions.ts, one table for the mapping and the checks).
    permissionMode: ADAPTER_PERMISSIONS.codex.enforces,
    contextWindowHint: null,
  },
  skills: { kind: 'file', file: 'AGENTS.md' },
  endpointFamilies: ['openai-responses'],
  verified: true,
  // test/clis/package.json pins @openai/codex 0.169.0.
  testedVersions: '~0.169.0',

  async probeAuth(input) {
    const variable = firstSetVariable(input.env, ['CODEX_API_KEY', 'OPENAI_API_KEY'])
    if (variable) return { state: 'ok', source: variable }
    const authFile = path.join(configDirectory(input, 'CODEX_HOME', '.codex'), 'auth.json')
    const auth = await input.readJson(authFile)
    if (isRecord(auth)) {
      const hasKey = typeof auth.OPENAI_API_KEY === 'string' && auth.OPENAI_API_KEY !== ''
      if (hasKey || isRecord(auth.tokens)) return { state: 'ok', source: authFile }
    }
    return { state: 'missing', hint: 'run `codex login`, or set OPENAI_API_KEY' }
  },

  buildLaunch(input) {
    const environment = childEnvironment(input)
    if (input.endpoint?.apiKey !== undefined) environment[CODEX_API_KEY_VARIABLE] = input.endpoint.apiKey
    return {
      ...spawnCommand(input.executable, codexArgs(input)),
      env: environment,
      stdin: input.prompt,
      files: [],
    }
  },

  createParser: (context) => createCodexStreamParser(context),
} satisfies AdapterDef
