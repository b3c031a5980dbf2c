// Cursor Agent (`cursor-agent`, lately also installed as `agent`). UNVERIFIED: no registry package ships
// it, so this definition follows Cursor's documentation (print mode, stream-json with partial output,
// --force, --trust, --workspace, --resume <chatId>) and is tested only against a fake CLI replaying the
// documented format. It has no base-URL setting, so it always runs on its own login, unproxied.
import { ADAPTER_PERMISSIONS, effectivePermissions, type PermissionMode } from '../../core/permissions.js'
import { createCursorStreamParser } from '../parsers/cursor-stream.js'
import { ADAPTER_SPECIFICATION_VERSION, type AdapterDef } from '../types.js'
import {
  childEnvironment,
  firstSetVariable,
  firstVersion,
  spawnCommand,
  optionalFlag,
} from './launch-helpers.js'

/**
 * Print mode without --force edits workspace files and refuses whatever needs approval (shell, MCP, web):
 * that is `workspace`. `--mode ask` is read-only; only `permissive` gets --force (every action runs).
 */
const FLAGS_BY_MODE: Record<PermissionMode, string[]> = {
  strict: ['--mode', 'ask'],
  workspace: [],
  permissive: ['--force'],
}

export const cursorAgentAdapter = {
  specificationVersion: ADAPTER_SPECIFICATION_VERSION,
  id: 'cursor-agent',
  displayName: 'Cursor Agent',
  // `agent` is a generic name other tools use too, so the unambiguous one goes first.
  binaries: ['cursor-agent', 'agent'],
  configDir: '.cursor',
  versionArgs: ['--version'],
  parseVersion: firstVersion,
  capabilities: {
    streaming: true,
    resume: true,
    surgicalEdit: true,
    nativeSkillLoading: false,
    // What Hangar can hold it to (src/core/permissions.ts, one table for the mapping and the checks).
    permissionMode: ADAPTER_PERMISSIONS['cursor-agent'].enforces,
    contextWindowHint: null,
  },
  skills: { kind: 'file', file: '.cursorrules' },
  endpointFamilies: [],
  verified: false,
  // No registry ships it: the fake CLI replays Cursor's documented format of its 2026.09 releases.
  testedVersions: '~2026.9.1',

  async probeAuth(input) {
    const variable = firstSetVariable(input.env, ['CURSOR_API_KEY'])
    if (variable) return { state: 'ok', source: variable }
    // Its login is stored in a place the documentation does not describe: no clear signal.
    return { state: 'unknown', hint: 'run `cursor-agent login`, or set CURSOR_API_KEY' }
  },

  buildLaunch(input) {
    const args = [
      '-p',
      '--output-format',
      'stream-json',
      '--stream-partial-output',
      ...FLAGS_BY_MODE[effectivePermissions(input.permissions).mode],
      // Headless runs otherwise stop at the workspace-trust prompt.
      '--trust',
      '--workspace',
      input.cwd,
      ...optionalFlag('--model', input.model),
      ...optionalFlag('--resume', input.resumeSessionId),
      ...input.extraArgs,
      // The documented headless form takes the prompt as the last argument.
      input.prompt,
    ]
    return {
      ...spawnCommand(input.executable, args),
      // No endpoint mapping: Cursor cannot be pointed at a base URL.
      env: childEnvironment(input),
      stdin: null,
      files: [],
    }
  },

  createParser: (context) => createCursorStreamParser(context),
} satisfies AdapterDef
