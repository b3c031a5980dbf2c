// The bubblewrap command line of a sandboxed run: pure, so what confines an agent can be read (and tested)
// in one place. Order matters: bubblewrap applies its mounts in argument order, so the whole root goes in
// read-only first, then what must be hidden (tmpfs over the daemon user's home and the data dir, a private
// /tmp), then what the agent may see again (read-only extras), and last what it may write.

export interface BwrapLayout {
  /** Directories hidden behind an empty tmpfs (the daemon user's home, the data dir). */
  hidden: readonly string[]
  /** Shown read-only on top of what is hidden (the CLI's install, node, a worktree's git dir). */
  readOnly: readonly string[]
  /** Bound read-write: the workspace, the per-run directory, the profile's writable paths. */
  writable: readonly string[]
  /** Bound read-only last (the per-run sockets), so nothing writable above covers them. */
  readOnlyLast: readonly string[]
  /** The working directory inside. */
  cwd: string
}

/** Paths nested in another of the list go after it, so a later mount never hides an earlier, deeper one. */
function shallowFirst(paths: readonly string[]): string[] {
  return [...new Set(paths)].sort((left, right) => left.split('/').length - right.split('/').length)
}

export function bwrapArgs(layout: BwrapLayout, command: readonly string[]): string[] {
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/dev/shm',
  ]
  for (const directory of shallowFirst(layout.hidden)) args.push('--tmpfs', directory)
  for (const directory of shallowFirst(layout.readOnly)) args.push('--ro-bind-try', directory, directory)
  for (const directory of shallowFirst(layout.writable)) args.push('--bind', directory, directory)
  for (const directory of layout.readOnlyLast) args.push('--ro-bind', directory, directory)
  args.push('--chdir', layout.cwd, '--')
  args.push(...command)
  return args
}
