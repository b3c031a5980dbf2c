// How a project's workspace lifecycle (copy, setup, teardown, ports) reads on the Projects page: where it
// comes from, whether the repository's `.hangar/workspace.yaml` runs, and what approving it would let run.
// Pure: the card (components/workspace-lifecycle-card.tsx) only lays these out. Commands are text here,
// never executed in the browser.
import type { WorkspaceLifecycle, WorkspaceLifecycleConfig } from './types'

export type LifecycleState = 'hangar.yaml' | 'approved' | 'unapproved' | 'invalid' | 'none'

export function lifecycleState(lifecycle: WorkspaceLifecycle): LifecycleState {
  if (lifecycle.source === 'hangar.yaml') return 'hangar.yaml'
  if (lifecycle.source === 'repository') return 'approved'
  const file = lifecycle.repositoryFile
  if (!file) return 'none'
  return file.problem !== null || file.config === null ? 'invalid' : 'unapproved'
}

/** One line saying where the lifecycle comes from and whether it runs. */
export function lifecycleSummary(lifecycle: WorkspaceLifecycle): string {
  switch (lifecycleState(lifecycle)) {
    case 'hangar.yaml':
      return `from hangar.yaml (projects.${lifecycle.project}.workspace)`
    case 'approved':
      return 'from .hangar/workspace.yaml (approved)'
    case 'unapproved':
      return '.hangar/workspace.yaml not approved: its commands do not run'
    case 'invalid':
      return '.hangar/workspace.yaml does not parse: nothing of it runs'
    case 'none':
      return 'nothing configured: new workspaces get what git tracks'
  }
}

/**
 * The configuration to show: the one that applies, else what an unapproved repository file asks for
 * (`applies: false`, so the card can say it does not run yet). Null when there is nothing to show.
 */
export function shownConfig(
  lifecycle: WorkspaceLifecycle,
): { config: WorkspaceLifecycleConfig; applies: boolean } | null {
  if (lifecycle.config) return { config: lifecycle.config, applies: true }
  const fileConfig = lifecycle.repositoryFile?.config
  return fileConfig ? { config: fileConfig, applies: false } : null
}

/** Whether the owner can approve the repository file now (hangar.yaml, when it sets one, wins anyway). */
export function canApprove(lifecycle: WorkspaceLifecycle): boolean {
  return lifecycleState(lifecycle) === 'unapproved'
}

export function formatPorts(ports: number): string {
  if (ports <= 0) return 'none'
  if (ports === 1) return '1 (HANGAR_PORT)'
  return `${ports} (HANGAR_PORT … HANGAR_PORT+${ports - 1})`
}

export function formatCopies(copy: readonly string[]): string {
  return copy.length === 0 ? 'none' : copy.join(', ')
}

/** What approving lets run on the daemon's host, each command exactly as the file says it. */
export function commandsToApprove(config: WorkspaceLifecycleConfig): { label: string; command: string }[] {
  return [
    ...(config.setup ? [{ label: 'setup (before the first agent turn)', command: config.setup }] : []),
    ...(config.teardown
      ? [{ label: 'teardown (when the workspace is removed)', command: config.teardown }]
      : []),
  ]
}

/** The hash as shown next to the file: enough to compare with `hangar workspaces config`. */
export function shortHash(hash: string): string {
  return hash.slice(0, 12)
}
