// Codex CLI (`codex exec`): JSONL events, the prompt on stdin (`-`), writes allowed inside the workspace
// with no approval prompts. An endpoint becomes a `hangar` model provider given as `-c` overrides, its key
// in an environment variable the provider names (never in argv).
import path from 'node:path'
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
    // Without these, exec runs read-only and rejects every write.
    '-c',
    'sandbox_mode="workspace-write"',
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
    permissionMode: true,
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
