import { describe, expect, it } from 'vitest'
import type { RepositoryLifecycleFile, WorkspaceLifecycle } from './types'
import {
  canApprove,
  commandsToApprove,
  formatCopies,
  formatPorts,
  lifecycleState,
  lifecycleSummary,
  shortHash,
  shownConfig,
} from './workspace-lifecycle'

const fileConfig = { copy: ['.env*'], setup: 'echo ready', teardown: 'echo bye', ports: 2 }
const file = (over: Partial<RepositoryLifecycleFile> = {}): RepositoryLifecycleFile => ({
  path: '/srv/shop/.hangar/workspace.yaml',
  contentHash: 'a'.repeat(64),
  approved: false,
  approvedAt: null,
  config: fileConfig,
  problem: null,
  ...over,
})
const lifecycle = (over: Partial<WorkspaceLifecycle>): WorkspaceLifecycle => ({
  project: 'shop',
  source: 'none',
  config: null,
  repositoryFile: null,
  ...over,
})

describe('workspace lifecycle on the Projects page', () => {
  it('says where the lifecycle comes from', () => {
    const fromYaml = lifecycle({ source: 'hangar.yaml', config: { copy: [], ports: 0 } })
    expect(lifecycleSummary(fromYaml)).toBe('from hangar.yaml (projects.shop.workspace)')
    const approved = lifecycle({
      source: 'repository',
      config: fileConfig,
      repositoryFile: file({ approved: true }),
    })
    expect(lifecycleSummary(approved)).toBe('from .hangar/workspace.yaml (approved)')
    expect(lifecycleSummary(lifecycle({}))).toBe('nothing configured: new workspaces get what git tracks')
  })

  it('warns that an unapproved file does not run, and offers it for approval', () => {
    const pending = lifecycle({ repositoryFile: file() })
    expect(lifecycleState(pending)).toBe('unapproved')
    expect(lifecycleSummary(pending)).toBe('.hangar/workspace.yaml not approved: its commands do not run')
    expect(canApprove(pending)).toBe(true)
    // Shown, but marked as not applying.
    expect(shownConfig(pending)).toEqual({ config: fileConfig, applies: false })
  })

  it('offers nothing to approve for a file that does not parse, or one hangar.yaml overrides', () => {
    const broken = lifecycle({ repositoryFile: file({ config: null, problem: 'ports: expected a number' }) })
    expect(lifecycleState(broken)).toBe('invalid')
    expect(canApprove(broken)).toBe(false)
    expect(shownConfig(broken)).toBeNull()
    const overridden = lifecycle({
      source: 'hangar.yaml',
      config: { copy: [], setup: 'npm ci', ports: 0 },
      repositoryFile: file(),
    })
    expect(canApprove(overridden)).toBe(false)
    expect(shownConfig(overridden)).toEqual({
      config: { copy: [], setup: 'npm ci', ports: 0 },
      applies: true,
    })
  })

  it('formats ports, copies and the hash', () => {
    expect(formatPorts(0)).toBe('none')
    expect(formatPorts(1)).toBe('1 (HANGAR_PORT)')
    expect(formatPorts(3)).toBe('3 (HANGAR_PORT … HANGAR_PORT+2)')
    expect(formatCopies([])).toBe('none')
    expect(formatCopies(['.env*', 'config/local.json'])).toBe('.env*, config/local.json')
    expect(shortHash('0123456789abcdef'.repeat(4))).toBe('0123456789ab')
  })

  it('lists exactly the commands approving lets run', () => {
    expect(commandsToApprove(fileConfig)).toEqual([
      { label: 'setup (before the first agent turn)', command: 'echo ready' },
      { label: 'teardown (when the workspace is removed)', command: 'echo bye' },
    ])
    expect(commandsToApprove({ copy: ['.env'], ports: 1 })).toEqual([])
  })
})
