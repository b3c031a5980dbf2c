// Agents run at a lower CPU priority than the daemon, so a burst of agent work (twenty CLIs starting, a
// test suite) cannot starve the one process that streams every agent's output to its clients.
// An agent leads its own session (detached), and with the kernel's autogroup scheduling on (the default
// on desktop and many server kernels) each session is its own scheduling group: a plain nice then weighs
// only inside the agent's group, so the group's own nice (/proc/<pid>/autogroup) is set as well.
import { readFileSync, writeFileSync } from 'node:fs'
import { setPriority } from 'node:os'

/** The niceness agents run at (0 is the daemon's): low enough to yield, not so low they stall. */
export const AGENT_NICENESS = 10

function autogroupOf(pid: number | 'self'): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/autogroup`, 'utf8').split(' ')[0]
  } catch {
    return undefined
  }
}

/** Best effort: a kernel without autogroups, or a process already gone, leaves the agent as it is. */
export function lowerAgentPriority(pid: number, niceness = AGENT_NICENESS): void {
  try {
    setPriority(pid, niceness)
  } catch {
    // Gone already, or not allowed here: the agent runs at the daemon's priority.
  }
  const group = autogroupOf(pid)
  // Never the daemon's own group: that would lower the daemon itself.
  if (group === undefined || group === autogroupOf('self')) return
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(niceness))
  } catch {
    // Autogroups off (the file refuses writes), or the process is gone.
  }
}
