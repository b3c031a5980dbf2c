// Claude Code (`claude`): `-p` with the prompt on stdin, stream-json with token deltas, the profile's
// permissions as --permission-mode and tool lists (by default edits are accepted and Bash refused; the
// default `-p` mode would deny Write). Pointed at an endpoint by ANTHROPIC_BASE_URL.
import path from 'node:path'
import { createClaudeStreamParser } from '../parsers/claude-stream.js'
import {
  ADAPTER_PERMISSIONS,
  CLAUDE_PERMISSIVE_TOOLS,
  effectivePermissions,
  type PermissionsConfig,
} from '../../core/permissions.js'
import { ADAPTER_SPECIFICATION_VERSION, type AdapterDef, type AuthState, type LaunchInput } from '../types.js'
import {
  childEnvironment,
  configDirectory,
  firstSetVariable,
  firstVersion,
  isRecord,
  spawnCommand,
  withoutVersionSuffix,
  optionalFlag,
} from './launch-helpers.js'

const SIGN_IN_HINT = 'run `claude` and sign in, or set ANTHROPIC_API_KEY'

/**
 * strict: dontAsk (whatever would ask is refused: reads only); workspace: acceptEdits (edits in the
 * working directory, Bash and web refused); permissive: acceptEdits plus Bash and web tools without
 * asking. Never bypassPermissions: it switches the CLI's own checks off (and is refused as root).
 */
export function claudePermissionArgs(permissions: PermissionsConfig | undefined): string[] {
  const { mode, allowedTools = [], deniedTools = [] } = effectivePermissions(permissions)
  const allowed = [...new Set([...(mode === 'permissive' ? CLAUDE_PERMISSIVE_TOOLS : []), ...allowedTools])]
  return [
    '--permission-mode',
    mode === 'strict' ? 'dontAsk' : 'acceptEdits',
    // One comma-separated value: the flags are variadic and would swallow what follows.
    ...(allowed.length > 0 ? ['--allowed-tools', allowed.join(',')] : []),
    ...(deniedTools.length > 0 ? ['--disallowed-tools', deniedTools.join(',')] : []),
  ]
}

function claudeEnvironment(input: LaunchInput): Record<string, string> {
  const environment = childEnvironment(input)
  // Switches off telemetry, error reporting, update checks and the other calls to api.anthropic.com.
  environment.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = '1'
  environment.DISABLE_AUTOUPDATER = '1'
  const endpoint = input.endpoint
  if (endpoint) {
    environment.ANTHROPIC_BASE_URL = withoutVersionSuffix(endpoint.baseUrl)
    if (endpoint.apiKey !== undefined) {
      environment.ANTHROPIC_API_KEY = endpoint.apiKey
      // One credential only: a bearer token left in the environment would be sent instead of the key.
      delete environment.ANTHROPIC_AUTH_TOKEN
    }
  }
  return environment
}

/** Reads `.credentials.json` (subscription login): expired only when it cannot refresh itself. */
function credentialsFileState(file: string, content: unknown, now: Date): AuthState | undefined {
  if (!isRecord(content)) return undefined
  const oauth = content.claudeAiOauth
  if (!isRecord(oauth) || typeof oauth.accessToken !== 'string') return undefined
  const expiresAt = typeof oauth.expiresAt === 'number' ? oauth.expiresAt : undefined
  const canRefresh = typeof oauth.refreshToken === 'string' && oauth.refreshToken !== ''
  if (expiresAt !== undefined && expiresAt < now.getTime() && !canRefresh) {
    return { state: 'expired', source: file, hint: 'run `claude` and sign in again' }
  }
  return { state: 'ok', source: file }
}

export const claudeCodeAdapter = {
  specificationVersion: ADAPTER_SPECIFICATION_VERSION,
  id: 'claude-code',
  displayName: 'Claude Code',
  binaries: ['claude'],
  configDir: '.claude',
  versionArgs: ['--version'],
  parseVersion: firstVersion,
  capabilities: {
    streaming: true,
    resume: true,
    surgicalEdit: true,
    nativeSkillLoading: true,
    // What Hangar can hold it to (src/core/permissions.ts, one table for the mapping and the checks).
    permissionMode: ADAPTER_PERMISSIONS['claude-code'].enforces,
    contextWindowHint: 200_000,
  },
  skills: { kind: 'native', directory: '.claude/skills' },
  endpointFamilies: ['anthropic'],
  verified: true,
  // test/clis/package.json pins @anthropic-ai/claude-code 2.1.330.
  testedVersions: '~2.1.330',

  async probeAuth(input) {
    const variable = firstSetVariable(input.env, [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'CLAUDE_CODE_OAUTH_TOKEN',
    ])
    if (variable) return { state: 'ok', source: variable }
    const directory = configDirectory(input, 'CLAUDE_CONFIG_DIR', '.claude')
    const credentialsFile = path.join(directory, '.credentials.json')
    const fromFile = credentialsFileState(credentialsFile, await input.readJson(credentialsFile), input.now)
    if (fromFile) return fromFile
    // An API key approved in the interactive setup is kept in ~/.claude.json.
    const settingsFile = path.join(input.home, '.claude.json')
    const settings = await input.readJson(settingsFile)
    if (isRecord(settings) && typeof settings.primaryApiKey === 'string') {
      return { state: 'ok', source: settingsFile }
    }
    return { state: 'missing', hint: SIGN_IN_HINT }
  },

  buildLaunch(input) {
    const model = input.model ?? input.endpoint?.model
    const args = [
      '-p',
      '--output-format',
      'stream-json',
      // stream-json in print mode refuses to run without --verbose.
      '--verbose',
      '--include-partial-messages',
      ...claudePermissionArgs(input.permissions),
      ...optionalFlag('--model', model),
      ...optionalFlag('--resume', input.resumeSessionId),
      ...input.extraArgs,
    ]
    return {
      ...spawnCommand(input.executable, args),
      env: claudeEnvironment(input),
      stdin: input.prompt,
      files: [],
    }
  },

  createParser: (context) => createClaudeStreamParser(context),
} satisfies AdapterDef
