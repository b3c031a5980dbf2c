// Gemini CLI (`gemini`): headless because stdin is a pipe (the prompt goes there), stream-json events,
// the profile's permissions as the approval mode (it decides which tools the model is even offered; by
// default the edit tools but no shell) and tool lists in the run's settings file. Pointed at an
// endpoint by GOOGLE_GEMINI_BASE_URL + GEMINI_API_KEY plus `selectedType: gemini-api-key`, which goes in a
// system settings file of the run so the user's ~/.gemini is never written.
import path from 'node:path'
import { ADAPTER_PERMISSIONS, effectivePermissions, type PermissionMode } from '../../core/permissions.js'
import { createGeminiStreamParser } from '../parsers/gemini-stream.js'
import { ADAPTER_SPECIFICATION_VERSION, type AdapterDef, type AuthState, type LaunchInput } from '../types.js'
import {
  childEnvironment,
  configDirectory,
  firstSetVariable,
  firstVersion,
  isRecord,
  spawnCommand,
  trimTrailingSlash,
  optionalFlag,
} from './launch-helpers.js'

export const GEMINI_SETTINGS_FILE = 'gemini-system-settings.json'

/**
 * Where the run's settings go. With the user's own HOME: a system settings file in the run dir
 * (GEMINI_CLI_SYSTEM_SETTINGS_PATH), which overrides ~/.gemini/settings.json without touching it. Gemini
 * ignores a system file with a group- or world-writable folder above it (a run dir under /tmp), and the
 * override hides an admin's /etc/gemini-cli/settings.json. With an isolated HOME: its user settings file,
 * which has neither caveat.
 */
function settingsLocation(input: LaunchInput): { file: string; systemScope: boolean } {
  if (input.isolatedHome)
    return { file: path.join(input.home, '.gemini', 'settings.json'), systemScope: false }
  return { file: path.join(input.runDir, GEMINI_SETTINGS_FILE), systemScope: true }
}

/** Headless: `default` offers no write, shell or web tools; `auto_edit` adds edits; `yolo` everything. */
const APPROVAL_MODE_BY_MODE: Record<PermissionMode, string> = {
  strict: 'default',
  workspace: 'auto_edit',
  permissive: 'yolo',
}

function systemSettings(input: LaunchInput): Record<string, unknown> {
  const settings: Record<string, unknown> = {
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  }
  const { allowedTools, deniedTools } = effectivePermissions(input.permissions)
  if (allowedTools !== undefined || deniedTools !== undefined) {
    // `allowed`: run without confirmation; `exclude`: never offered to the model.
    settings.tools = {
      ...(allowedTools !== undefined && { allowed: allowedTools }),
      ...(deniedTools !== undefined && { exclude: deniedTools }),
    }
  }
  // With a base URL alone Gemini picks the "gateway" auth type, which headless mode rejects (exit 41).
  if (input.endpoint?.apiKey !== undefined) settings.security = { auth: { selectedType: 'gemini-api-key' } }
  return settings
}

function geminiEnvironment(
  input: LaunchInput,
  settings: { file: string; systemScope: boolean },
): Record<string, string> {
  const environment = childEnvironment(input)
  // The default launcher re-spawns itself and ignores SIGTERM in the parent: keep it one process.
  environment.GEMINI_CLI_NO_RELAUNCH = 'true'
  if (settings.systemScope) environment.GEMINI_CLI_SYSTEM_SETTINGS_PATH = settings.file
  const endpoint = input.endpoint
  if (endpoint) {
    environment.GOOGLE_GEMINI_BASE_URL = trimTrailingSlash(endpoint.baseUrl)
    if (endpoint.apiKey !== undefined) {
      environment.GEMINI_API_KEY = endpoint.apiKey
      // Other auth selectors in the environment would win over the key.
      delete environment.GOOGLE_API_KEY
      delete environment.GOOGLE_GENAI_USE_VERTEXAI
      delete environment.GOOGLE_GENAI_USE_GCA
    }
  }
  return environment
}

function oauthFileState(file: string, content: unknown, now: Date): AuthState | undefined {
  if (!isRecord(content)) return undefined
  const canRefresh = typeof content.refresh_token === 'string' && content.refresh_token !== ''
  if (canRefresh) return { state: 'ok', source: file }
  if (typeof content.access_token !== 'string') return undefined
  const expiry = typeof content.expiry_date === 'number' ? content.expiry_date : undefined
  if (expiry !== undefined && expiry < now.getTime()) {
    return { state: 'expired', source: file, hint: 'run `gemini` and sign in with Google again' }
  }
  return { state: 'ok', source: file }
}

export const geminiAdapter = {
  specificationVersion: ADAPTER_SPECIFICATION_VERSION,
  id: 'gemini',
  displayName: 'Gemini CLI',
  binaries: ['gemini'],
  configDir: '.gemini',
  versionArgs: ['--version'],
  parseVersion: firstVersion,
  capabilities: {
    streaming: true,
    resume: true,
    surgicalEdit: true,
    nativeSkillLoading: false,
    // What Hangar can hold it to (src/core/permissions.ts, one table for the mapping and the checks).
    permissionMode: ADAPTER_PERMISSIONS.gemini.enforces,
    contextWindowHint: 1_048_576,
  },
  skills: { kind: 'file', file: 'GEMINI.md' },
  endpointFamilies: ['gemini'],
  verified: true,
  // test/clis/package.json pins @google/gemini-cli 0.61.0.
  testedVersions: '~0.61.0',

  async probeAuth(input) {
    const variable = firstSetVariable(input.env, ['GEMINI_API_KEY', 'GOOGLE_API_KEY'])
    if (variable) return { state: 'ok', source: variable }
    if (
      input.env.GOOGLE_GENAI_USE_VERTEXAI === 'true' &&
      firstSetVariable(input.env, ['GOOGLE_CLOUD_PROJECT'])
    ) {
      return { state: 'ok', source: 'GOOGLE_GENAI_USE_VERTEXAI' }
    }
    const oauthFile = path.join(configDirectory(input, undefined, '.gemini'), 'oauth_creds.json')
    const fromFile = oauthFileState(oauthFile, await input.readJson(oauthFile), input.now)
    if (fromFile) return fromFile
    return { state: 'missing', hint: 'run `gemini` and sign in with Google, or set GEMINI_API_KEY' }
  },

  buildLaunch(input) {
    const settings = settingsLocation(input)
    const model = input.model ?? input.endpoint?.model
    const args = [
      '--output-format',
      'stream-json',
      // An untrusted folder silently forces the approval mode back to "default" (no write tools).
      '--skip-trust',
      '--approval-mode',
      APPROVAL_MODE_BY_MODE[effectivePermissions(input.permissions).mode],
      ...optionalFlag('--model', model),
      ...optionalFlag('--resume', input.resumeSessionId),
      ...input.extraArgs,
    ]
    return {
      ...spawnCommand(input.executable, args),
      env: geminiEnvironment(input, settings),
      // Non-TTY stdin makes Gemini headless and is read as the prompt; no -p needed.
      stdin: input.prompt,
      files: [{ path: settings.file, content: `${JSON.stringify(systemSettings(input), null, 2)}\n` }],
    }
  },

  createParser: (context) => createGeminiStreamParser(context),
} satisfies AdapterDef
