// OpenCode (`opencode run`): JSON events, the prompt on stdin (a positional prompt reaches the model
// wrapped in literal quotes). An endpoint becomes a `hangar` provider (or the built-in anthropic one) in
// OPENCODE_CONFIG_CONTENT, whose key is read from an environment variable by OpenCode's `{env:…}`
// substitution, so the key is in neither argv nor the config text.
import path from 'node:path'
import { ADAPTER_PERMISSIONS, effectivePermissions, type PermissionsConfig } from '../../core/permissions.js'
import { createOpencodeStreamParser } from '../parsers/opencode-stream.js'
import {
  ADAPTER_SPECIFICATION_VERSION,
  type AdapterDef,
  type LaunchInput,
  type ModelEndpoint,
} from '../types.js'
import {
  childEnvironment,
  firstSetVariable,
  firstVersion,
  isRecord,
  spawnCommand,
  withVersionSuffix,
  optionalFlag,
} from './launch-helpers.js'

export const OPENCODE_API_KEY_VARIABLE = 'HANGAR_OPENCODE_API_KEY'
const DEFAULT_MODELS = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-5.5' } as const
/** Nothing listens there: OpenCode's per-run `npm install` of its plugin fails at once instead of going out. */
const DEAD_REGISTRY = 'http://127.0.0.1:9/'

function providerConfig(endpoint: ModelEndpoint, model: string | undefined): Record<string, unknown> {
  const options: Record<string, unknown> = { baseURL: withVersionSuffix(endpoint.baseUrl) }
  if (endpoint.apiKey !== undefined) options.apiKey = `{env:${OPENCODE_API_KEY_VARIABLE}}`
  if (endpoint.family === 'anthropic') {
    const id = model ?? DEFAULT_MODELS.anthropic
    // The built-in provider keeps OpenCode's Anthropic specifics; listing the model means it need not be
    // in the bundled catalogue (the catalogue fetch is switched off).
    const models = { [id]: { name: id, tool_call: true, reasoning: true } }
    return { provider: { anthropic: { options, models } }, model: `anthropic/${id}` }
  }
  const id = model ?? DEFAULT_MODELS.openai
  return {
    provider: {
      hangar: {
        // Bundled with OpenCode: nothing gets installed.
        npm: '@ai-sdk/openai-compatible',
        name: 'Hangar',
        options,
        models: { [id]: { name: id, tool_call: true, reasoning: true } },
      },
    },
    model: `hangar/${id}`,
  }
}

/** Tools beyond the workspace's files: refused unless the mode is permissive. */
const OUTSIDE_TOOLS = ['bash', 'webfetch', 'websearch', 'external_directory'] as const

/**
 * OpenCode's `permission` config (`run` refuses whatever would ask): strict denies edits and the outside
 * tools, workspace allows edits only, permissive allows everything. Tool lists allow or deny by key.
 */
export function opencodePermission(
  permissions: PermissionsConfig | undefined,
): string | Record<string, string> {
  const { mode, allowedTools = [], deniedTools = [] } = effectivePermissions(permissions)
  const rules: Record<string, string> =
    mode === 'permissive'
      ? { '*': 'allow' }
      : {
          edit: mode === 'strict' ? 'deny' : 'allow',
          ...Object.fromEntries(OUTSIDE_TOOLS.map((tool) => [tool, 'deny'])),
        }
  for (const tool of allowedTools) rules[tool] = 'allow'
  for (const tool of deniedTools) rules[tool] = 'deny'
  return rules
}

function opencodeConfig(input: LaunchInput): Record<string, unknown> {
  const model = input.model ?? input.endpoint?.model
  const base = { autoupdate: false, share: 'disabled', permission: opencodePermission(input.permissions) }
  return input.endpoint ? { ...base, ...providerConfig(input.endpoint, model) } : base
}

function opencodeEnvironment(input: LaunchInput): Record<string, string> {
  const environment = childEnvironment(input)
  environment.OPENCODE_CONFIG_CONTENT = JSON.stringify(opencodeConfig(input))
  environment.OPENCODE_DISABLE_MODELS_FETCH = 'true'
  environment.OPENCODE_DISABLE_AUTOUPDATE = 'true'
  environment.OPENCODE_DISABLE_SHARE = 'true'
  environment.OPENCODE_DISABLE_LSP_DOWNLOAD = 'true'
  environment.npm_config_registry = DEAD_REGISTRY
  environment.NPM_CONFIG_REGISTRY = DEAD_REGISTRY
  environment.BUN_CONFIG_REGISTRY = DEAD_REGISTRY
  if (input.endpoint?.apiKey !== undefined) environment[OPENCODE_API_KEY_VARIABLE] = input.endpoint.apiKey
  return environment
}

export const opencodeAdapter = {
  specificationVersion: ADAPTER_SPECIFICATION_VERSION,
  id: 'opencode',
  displayName: 'OpenCode',
  binaries: ['opencode'],
  configDir: '.config/opencode',
  versionArgs: ['--version'],
  parseVersion: firstVersion,
  capabilities: {
    // Event-level streaming: whole text parts and finished tool calls, no token deltas.
    streaming: true,
    resume: true,
    surgicalEdit: true,
    nativeSkillLoading: true,
    // What Hangar can hold it to (src/core/permissions.ts, one table for the mapping and the checks).
    permissionMode: ADAPTER_PERMISSIONS.opencode.enforces,
    contextWindowHint: null,
  },
  skills: { kind: 'native', directory: '.opencode/skills' },
  endpointFamilies: ['openai-chat', 'anthropic'],
  verified: true,
  // test/clis/package.json pins opencode-ai 1.18.33.
  testedVersions: '~1.18.33',

  async probeAuth(input) {
    const dataHome = input.env.XDG_DATA_HOME ?? path.join(input.home, '.local/share')
    const authFile = path.join(dataHome, 'opencode', 'auth.json')
    const auth = await input.readJson(authFile)
    if (isRecord(auth) && Object.keys(auth).length > 0) return { state: 'ok', source: authFile }
    const variable = firstSetVariable(input.env, [
      'OPENCODE_API_KEY',
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
      'GEMINI_API_KEY',
      'OPENROUTER_API_KEY',
    ])
    if (variable) return { state: 'ok', source: variable }
    // OpenCode also offers free models that need no sign-in, so nothing found is not proof of a failure.
    return {
      state: 'unknown',
      hint: 'run `opencode auth login`, or set a provider key such as ANTHROPIC_API_KEY',
    }
  },

  buildLaunch(input) {
    // A model without an endpoint must already be `provider/model` for the user's own configuration.
    const model = input.endpoint ? undefined : input.model
    const args = [
      'run',
      '--format',
      'json',
      // Reasoning parts are emitted only with --thinking.
      '--thinking',
      ...optionalFlag('--model', model),
      ...optionalFlag('--session', input.resumeSessionId),
      ...input.extraArgs,
    ]
    return {
      ...spawnCommand(input.executable, args),
      env: opencodeEnvironment(input),
      stdin: input.prompt,
      files: [],
    }
  },

  createParser: (context) => createOpencodeStreamParser(context),
} satisfies AdapterDef
