// Agents run at a lower CPU priority than the daemon, so a burst of agent work (twenty CLIs starting, a
// test suite) cannot starve the one process that streams every agent's output to its clients.
// An agent leads its own session (detached), and with the kernel's autogroup scheduling on (the default
// on desktop and many server kernels) each session is its own scheduling group: a plain nice then weighs
// only inside the agent's group, so the group's own nice (/proc/<pid>/autogroup) is set as well.
import { readFileSync, writeFileSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

/**
 * How much nicer than the daemon agents run: low enough to yield to it, not so low they stall. Not 19: as
 * nice as that, agents yield to every normal process too, and real CLIs that take 16-20 s on a loaded machine
 * (Claude Code through the proxy, sandboxed) passed their 30-60 s limits in the test suite. At 10, twenty
 * agents' scheduling groups starting at once still outweigh the daemon's (CFS weights 20 × 110 against 1024):
 * the stdout → SSE p99 over such a start stays at 15-40 ms (`npm run bench`; 6-16 ms at 19).
 */
export const AGENT_NICENESS_OFFSET = 10
const NICEST = 19

/** The niceness an agent gets when the daemon's is `daemon`. */
export function agentNiceness(daemon: number): number {
  return Math.min(NICEST, daemon + AGENT_NICENESS_OFFSET)
}

/** The scheduling group a process is in: an autogroup, or the root group its session never left. */
export interface Autogroup {
  name: string
  nice: number
}

/**
 * The root task group: the kernel prints nothing for a process that is in no autogroup of its own (one whose
 * session descends from init's without a setsid, as a daemon started straight by a container's init is).
 * Such a process competes at its own niceness against every autogroup, as a group of nice 0 would.
 */
export const ROOT_GROUP: Autogroup = { name: '/', nice: 0 }

/** Parses /proc/<pid>/autogroup (`/autogroup-85 nice 0`, or nothing for the root group). */
export function parseAutogroup(text: string): Autogroup | undefined {
  const trimmed = text.trim()
  if (trimmed === '') return ROOT_GROUP
  const match = /^(\S+) nice (-?\d+)$/.exec(trimmed)
  return match ? { name: match[1]!, nice: Number(match[2]) } : undefined
}

/** A process's scheduling group, if the kernel has autogroups. */
export function autogroupOf(pid: number | 'self'): Autogroup | undefined {
  try {
    return parseAutogroup(readFileSync(`/proc/${pid}/autogroup`, 'utf8'))
  } catch {
    return undefined
  }
}

/**
 * What a process that starts agents in a session of its own (the sandbox's forwarder, behind bubblewrap's
 * --new-session) sets for itself: the process niceness and the autogroup niceness lowerAgentPriority gives.
 */
export function agentPriority(): { niceness: number; groupNiceness: number } {
  return {
    niceness: agentNiceness(getPriority()),
    groupNiceness: agentNiceness(autogroupOf('self')?.nice ?? 0),
  }
}

/** Best effort: a kernel without autogroups, or a process already gone, leaves the agent as it is. */
export function lowerAgentPriority(pid: number): void {
  try {
    setPriority(pid, agentNiceness(getPriority()))
  } catch {
    // Gone already: nothing to lower.
  }
  const group = autogroupOf(pid)
  const own = autogroupOf('self')
  // Never the daemon's own group (that would lower the daemon itself), nor the root group (no nice of its own).
  if (!group || !own || group.name === own.name || group.name === ROOT_GROUP.name) return
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(agentNiceness(own.nice)))
  } catch {
    // Autogroups off (the file refuses writes), not allowed (below 0 needs privilege), or the process is gone.
  }
}
