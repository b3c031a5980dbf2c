// Issue 18 item 8: permissions pass through; no privileged mode by default. Each adapter maps a
// profile's `permissions: { mode, allowedTools, deniedTools }` onto its own CLI's flags or config, and a
// profile without it gets the least authority that still edits files in the workspace (before: Cursor
// always got --force, Copilot --allow-all-tools, OpenClaw full exec, and no profile could say otherwise).
import { describe, expect, it } from 'vitest'
import { ADAPTER_PERMISSIONS, PERMISSION_MODES, type PermissionsConfig } from '../../core/permissions.js'
import { launchInput } from '../../../test/helpers/launch-input.js'
import type { AdapterDef, LaunchPlan } from '../types.js'
import { claudeCodeAdapter, claudePermissionArgs } from './claude-code.js'
import { codexAdapter } from './codex.js'
import { copilotAdapter, copilotPermissionArgs } from './copilot.js'
import { cursorAgentAdapter } from './cursor-agent.js'
import { GEMINI_SETTINGS_FILE, geminiAdapter } from './gemini.js'
import { OPENCLAW_CONFIG_FILE, openclawAdapter } from './openclaw.js'
import { opencodeAdapter } from './opencode.js'

function plan(adapter: AdapterDef, permissions?: PermissionsConfig): LaunchPlan {
  return adapter.buildLaunch(launchInput(permissions ? { permissions } : {}))
}

/** The value after `flag` in argv (every occurrence). */
function valuesOf(args: string[], flag: string): string[] {
  return args.flatMap((arg, index) => (arg === flag ? [args[index + 1] ?? ''] : []))
}

function fileJson(result: LaunchPlan, name: string): Record<string, unknown> {
  const file = result.files.find((entry) => entry.path.endsWith(name))
  return JSON.parse(file?.content ?? '{}') as Record<string, unknown>
}

describe('permissions of Claude Code', () => {
  const args = (permissions?: PermissionsConfig) => plan(claudeCodeAdapter, permissions).args
  it('accepts edits and allows nothing else by default', () => {
    expect(valuesOf(args(), '--permission-mode')).toEqual(['acceptEdits'])
    expect(args()).not.toContain('--allowed-tools')
    expect(args()).not.toContain('--dangerously-skip-permissions')
  })
  it('maps strict to dontAsk, permissive to accepted edits plus shell and web tools, never bypassPermissions', () => {
    expect(valuesOf(args({ mode: 'strict' }), '--permission-mode')).toEqual(['dontAsk'])
    expect(valuesOf(args({ mode: 'workspace' }), '--permission-mode')).toEqual(['acceptEdits'])
    const permissive = args({ mode: 'permissive' })
    expect(valuesOf(permissive, '--permission-mode')).toEqual(['acceptEdits'])
    expect(valuesOf(permissive, '--allowed-tools')).toEqual(['Bash,WebFetch,WebSearch'])
    expect(permissive.join(' ')).not.toMatch(/bypassPermissions|dangerously/)
  })
  it('passes tool lists as one comma-separated value each', () => {
    const result = args({ mode: 'strict', allowedTools: ['Edit', 'Bash(git *)'], deniedTools: ['WebFetch'] })
    expect(valuesOf(result, '--allowed-tools')).toEqual(['Edit,Bash(git *)'])
    expect(valuesOf(result, '--disallowed-tools')).toEqual(['WebFetch'])
    const both = args({ mode: 'permissive', allowedTools: ['Bash'], deniedTools: ['Bash'] })
    expect(valuesOf(both, '--allowed-tools')).toEqual(['Bash,WebFetch,WebSearch'])
    expect(valuesOf(both, '--disallowed-tools')).toEqual(['Bash'])
  })
})

describe('permissions of Codex', () => {
  const overrides = (permissions?: PermissionsConfig) => valuesOf(plan(codexAdapter, permissions).args, '-c')
  it('sandboxes writes to the workspace by default and never asks', () => {
    expect(overrides()).toContain('sandbox_mode="workspace-write"')
    expect(overrides()).toContain('approval_policy="never"')
    expect(plan(codexAdapter).args).not.toContain('--dangerously-bypass-approvals-and-sandbox')
  })
  it('maps strict to a read-only sandbox and permissive to no sandbox', () => {
    expect(overrides({ mode: 'strict' })).toContain('sandbox_mode="read-only"')
    expect(overrides({ mode: 'workspace' })).toContain('sandbox_mode="workspace-write"')
    expect(overrides({ mode: 'permissive' })).toContain('sandbox_mode="danger-full-access"')
    for (const mode of PERMISSION_MODES) expect(overrides({ mode })).toContain('approval_policy="never"')
  })
})

describe('permissions of Gemini CLI', () => {
  it('offers edit tools but no shell by default (auto_edit)', () => {
    const result = plan(geminiAdapter)
    expect(valuesOf(result.args, '--approval-mode')).toEqual(['auto_edit'])
    expect(result.args).not.toContain('--yolo')
    expect(fileJson(result, GEMINI_SETTINGS_FILE)).not.toHaveProperty('tools')
  })
  it('maps strict to default and permissive to yolo', () => {
    expect(valuesOf(plan(geminiAdapter, { mode: 'strict' }).args, '--approval-mode')).toEqual(['default'])
    expect(valuesOf(plan(geminiAdapter, { mode: 'permissive' }).args, '--approval-mode')).toEqual(['yolo'])
  })
  it('puts tool lists in the run settings file', () => {
    const result = plan(geminiAdapter, {
      mode: 'workspace',
      allowedTools: ['run_shell_command(git)'],
      deniedTools: ['web_fetch'],
    })
    expect(fileJson(result, GEMINI_SETTINGS_FILE).tools).toEqual({
      allowed: ['run_shell_command(git)'],
      exclude: ['web_fetch'],
    })
  })
})

describe('permissions of Copilot CLI', () => {
  const args = (permissions?: PermissionsConfig) => plan(copilotAdapter, permissions).args
  it('allows file writes only by default, not every tool', () => {
    expect(args()).toContain('--allow-tool=write')
    expect(args()).not.toContain('--allow-all-tools')
    expect(args()).not.toContain('--allow-all')
  })
  it('allows nothing in strict and every tool in permissive', () => {
    expect(args({ mode: 'strict' }).filter((arg) => arg.startsWith('--allow'))).toEqual([])
    expect(args({ mode: 'permissive' })).toContain('--allow-all-tools')
  })
  it('passes tool lists as attached --allow-tool / --deny-tool values', () => {
    const result = args({ mode: 'strict', allowedTools: ['shell(git:*)'], deniedTools: ['shell(rm)'] })
    expect(result).toContain('--allow-tool=shell(git:*)')
    expect(result).toContain('--deny-tool=shell(rm)')
  })
})

describe('permissions of OpenCode', () => {
  const permission = (permissions?: PermissionsConfig) =>
    (
      JSON.parse(plan(opencodeAdapter, permissions).env.OPENCODE_CONFIG_CONTENT ?? '{}') as Record<
        string,
        unknown
      >
    ).permission
  it('allows edits and denies shell, web and outside directories by default; never --auto', () => {
    expect(permission()).toEqual({
      edit: 'allow',
      bash: 'deny',
      webfetch: 'deny',
      websearch: 'deny',
      external_directory: 'deny',
    })
    expect(plan(opencodeAdapter).args).not.toContain('--auto')
  })
  it('denies edits in strict and allows everything in permissive', () => {
    expect(permission({ mode: 'strict' })).toMatchObject({ edit: 'deny', bash: 'deny' })
    expect(permission({ mode: 'permissive' })).toEqual({ '*': 'allow' })
  })
  it('allows and denies listed tools by key', () => {
    expect(permission({ mode: 'workspace', allowedTools: ['bash'], deniedTools: ['edit'] })).toMatchObject({
      bash: 'allow',
      edit: 'deny',
    })
  })
})

describe('permissions of Cursor Agent', () => {
  const args = (permissions?: PermissionsConfig) => plan(cursorAgentAdapter, permissions).args
  it('gets --force only in permissive mode', () => {
    expect(args()).not.toContain('--force')
    expect(args({ mode: 'workspace' })).not.toContain('--force')
    expect(args({ mode: 'strict' })).not.toContain('--force')
    expect(args({ mode: 'permissive' })).toContain('--force')
  })
  it('runs read-only (ask mode) in strict', () => {
    expect(valuesOf(args({ mode: 'strict' }), '--mode')).toEqual(['ask'])
    expect(args()).not.toContain('--mode')
  })
})

describe('permissions of OpenClaw', () => {
  const deny = (permissions?: PermissionsConfig) =>
    (fileJson(plan(openclawAdapter, permissions), OPENCLAW_CONFIG_FILE).tools as { deny: string[] }).deny
  it('denies shell and web tools but not file tools by default', () => {
    expect(deny()).toEqual(expect.arrayContaining(['exec', 'process', 'web_fetch']))
    expect(deny()).not.toContain('write')
    expect(deny()).not.toContain('edit')
  })
  it('also denies file changes in strict, nothing in permissive', () => {
    expect(deny({ mode: 'strict' })).toEqual(expect.arrayContaining(['write', 'edit', 'apply_patch', 'exec']))
    expect(deny({ mode: 'permissive' })).toEqual([])
  })
  it('lifts allowed tools out of the mode and adds denied ones', () => {
    const result = deny({ mode: 'workspace', allowedTools: ['exec'], deniedTools: ['edit'] })
    expect(result).not.toContain('exec')
    expect(result).toContain('edit')
  })
})

describe('reserved permission flags', () => {
  // Every flag an adapter sets from `permissions` is one `cliArgs` may not carry, so validation refuses
  // the clash instead of letting the CLI pick whichever flag came last.
  const variants: PermissionsConfig[] = PERMISSION_MODES.map((mode) => ({
    mode,
    allowedTools: ['x'],
    deniedTools: ['y'],
  }))
  const flagsOf = (args: string[]) =>
    args.filter((arg) => arg.startsWith('-')).map((arg) => arg.split('=')[0]!)
  it('lists every flag Claude Code and Copilot get from permissions', () => {
    for (const permissions of variants) {
      for (const flag of flagsOf(claudePermissionArgs(permissions)))
        expect(ADAPTER_PERMISSIONS['claude-code'].reservedFlags).toContain(flag)
      for (const flag of flagsOf(copilotPermissionArgs(permissions)))
        expect(ADAPTER_PERMISSIONS.copilot.reservedFlags).toContain(flag)
    }
  })
  it('lists the Gemini, Cursor and Codex settings it sets', () => {
    expect(ADAPTER_PERMISSIONS.gemini.reservedFlags).toContain('--approval-mode')
    expect(ADAPTER_PERMISSIONS['cursor-agent'].reservedFlags).toEqual(
      expect.arrayContaining(['--force', '--mode']),
    )
    expect(ADAPTER_PERMISSIONS.codex.reservedConfigKeys).toEqual(
      expect.arrayContaining(['sandbox_mode', 'approval_policy']),
    )
  })
})
