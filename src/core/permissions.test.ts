// Issue 18 item 8: a profile's `permissions` are checked where every profile is checked (hangar.yaml at
// start-up, UI/API profiles when saved): a bad mode and `cliArgs` that fight Hangar's permission flags
// are refused with their key path and a hint to use `permissions:` (before: no such key, and any
// `--permission-mode` in cliArgs silently raced the adapter's own).
import { describe, expect, it } from 'vitest'
import { type ConfigIssue, parseConfig } from './config.js'
import { AppError } from './errors.js'
import { permissionIssues } from './permissions.js'

function issuesOf(text: string): ConfigIssue[] {
  try {
    parseConfig(text, '/p/hangar.yaml')
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    return (error as AppError).details?.issues as ConfigIssue[]
  }
  throw new Error('expected a config error')
}

describe('permissions in hangar.yaml', () => {
  it('parses a mode with tool lists; a profile without permissions keeps none (the default mode)', () => {
    const config = parseConfig(
      [
        'agents:',
        '  reviewer:',
        '    adapter: claude-code',
        '    permissions: { mode: strict, allowedTools: [Read], deniedTools: ["Bash(rm *)"] }',
        '  helper: { adapter: codex, permissions: { mode: permissive } }',
        '  plain: { adapter: gemini }',
      ].join('\n'),
    )
    expect(config.agents.reviewer?.permissions).toEqual({
      mode: 'strict',
      allowedTools: ['Read'],
      deniedTools: ['Bash(rm *)'],
    })
    expect(config.agents.helper?.permissions).toEqual({ mode: 'permissive' })
    expect(config.agents.plain?.permissions).toBeUndefined()
  })

  it('refuses an unknown mode with its file, line and key path', () => {
    const issues = issuesOf('agents:\n  r:\n    adapter: claude-code\n    permissions: { mode: yolo }\n')
    expect(issues[0]).toMatchObject({ path: 'agents.r.permissions.mode', line: 4 })
    expect(issues[0]?.message).toMatch(/strict.*workspace.*permissive/)
  })

  it('refuses cliArgs that conflict with the permission flags, saying to use permissions: instead', () => {
    const issues = issuesOf(
      [
        'agents:',
        '  a: { adapter: claude-code, cliArgs: [--add-dir, /x, --permission-mode, bypassPermissions] }',
        '  b: { adapter: cursor-agent, cliArgs: [--force] }',
        '  c: { adapter: codex, cliArgs: [-c, "sandbox_mode=\\"danger-full-access\\""] }',
        '  d: { adapter: copilot, cliArgs: ["--allow-all-tools"] }',
        '  e: { adapter: gemini, cliArgs: ["--approval-mode=yolo"] }',
      ].join('\n'),
    )
    const byPath = Object.fromEntries(issues.map((issue) => [issue.path, issue.message]))
    expect(Object.keys(byPath).sort()).toEqual([
      'agents.a.cliArgs[2]',
      'agents.b.cliArgs[0]',
      'agents.c.cliArgs[1]',
      'agents.d.cliArgs[0]',
      'agents.e.cliArgs[0]',
    ])
    for (const message of Object.values(byPath)) expect(message).toContain('use permissions:')
    expect(byPath['agents.a.cliArgs[2]']).toContain('--permission-mode')
  })

  it('refuses tool lists an adapter cannot carry, and permissions on the built-in agent', () => {
    const issues = issuesOf(
      [
        'agents:',
        '  a: { adapter: codex, permissions: { mode: strict, deniedTools: [shell] } }',
        '  b: { adapter: builtin, permissions: { mode: permissive } }',
      ].join('\n'),
    )
    const byPath = Object.fromEntries(issues.map((issue) => [issue.path, issue.message]))
    expect(byPath['agents.a.permissions.deniedTools']).toContain('codex takes no per-tool permissions')
    expect(byPath['agents.b.permissions']).toContain('autoApprove')
  })
})

describe('permissionIssues', () => {
  it('lets unrelated cliArgs and flags that only share a prefix through', () => {
    expect(
      permissionIssues({ adapter: 'claude-code', cliArgs: ['--add-dir', '/x', '--permission-modes-help'] }),
    ).toEqual([])
    expect(permissionIssues({ adapter: 'codex', cliArgs: ['-c', 'model_reasoning_effort="high"'] })).toEqual(
      [],
    )
    expect(permissionIssues({ adapter: 'opencode', cliArgs: ['--agent', 'build'] })).toEqual([])
  })
  it('refuses the attached form and Codex -c overrides of sandbox keys', () => {
    expect(
      permissionIssues({ adapter: 'claude-code', cliArgs: ['--allowed-tools=Bash'] }).map(
        (issue) => issue.path,
      ),
    ).toEqual([['cliArgs', 0]])
    expect(
      permissionIssues({
        adapter: 'codex',
        cliArgs: ['--config=sandbox_workspace_write.network_access=true'],
      }),
    ).toHaveLength(1)
    expect(permissionIssues({ adapter: 'opencode', cliArgs: ['--auto'] })).toHaveLength(1)
  })
})
