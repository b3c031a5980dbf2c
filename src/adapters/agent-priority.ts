// Agents run at a lower CPU priority than the daemon, so a burst of agent work (twenty CLIs starting, a
// test suite) cannot starve the one process that streams every agent's output to its clients.
// An agent leads its own session (detached), and with the kernel's autogroup scheduling on (the default
// on desktop and many server kernels) each session is its own scheduling group: a plain nice then weighs
// only inside the agent's group, so the group's own nice (/proc/<pid>/autogroup) is set as well.
// Groups weigh alike whatever they hold, so twenty agents' groups at one niceness weigh twenty times one:
// the running agents share one weight budget instead (agentGroupNiceness), and are made nicer as more
// of them run, and less nice again as they end.
import { readFileSync, writeFileSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

/**
 * How much nicer than the daemon agents run: low enough to yield to it, not so low they stall. Not 19: as
 * nice as that, agents yield to every normal process too, and real CLIs that take 16-20 s on a loaded machine
 * (Claude Code through the proxy, sandboxed) passed their 30-60 s limits in the test suite. One agent, or a
 * few, run at 10; more share the daemon's weight (agentGroupNiceness).
 */
export const AGENT_NICENESS_OFFSET = 10
const NICEST = 19

/** The niceness an agent gets when the daemon's is `daemon`. */
export function agentNiceness(daemon: number): number {
  return Math.min(NICEST, daemon + AGENT_NICENESS_OFFSET)
}

/** The kernel's CFS weight of each niceness from -20 to 19 (sched_prio_to_weight): ×1.25 a step. */
const WEIGHTS = [
  88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121,
  2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23,
  18, 15,
]
const weightOf = (niceness: number) => WEIGHTS[Math.max(-20, Math.min(NICEST, niceness)) + 20]!

/**
 * The autogroup niceness of each of `agents` running agents when the daemon's group has niceness `daemon`:
 * the least nice, from agentNiceness(daemon) on, at which all of them together weigh no more than the
 * daemon's group. At 10 twenty agents' groups weighed twice the daemon's (20 × 110 against 1024), and while
 * they started or streamed on 2 cores the stdout → SSE p99 was 20-25 ms; sharing the weight (14 for
 * twenty, 45 each), 11 ms. Past 19 the kernel has no nicer level: the budget then gives way.
 */
export function agentGroupNiceness(daemon: number, agents: number): number {
  for (let niceness = agentNiceness(daemon); niceness < NICEST; niceness++)
    if (agents * weightOf(niceness) <= weightOf(daemon)) return niceness
  return NICEST
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
 * Agents of this process that lead a session (a scheduling group) of their own, each with its start time,
 * and the group niceness they were last given. Per process, not per supervisor: every runtime in the
 * process shares its weight.
 */
const running = new Map<number, string | undefined>()
let runningNiceness: number | undefined

/**
 * When a process started (field 22 of /proc/<pid>/stat, in clock ticks since boot): an agent that has
 * exited but is not yet reported ended may have its pid taken by another process, whose start differs.
 */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/**
 * What a process that starts agents in a session of its own (the agent launcher; the sandbox's forwarder,
 * behind bubblewrap's --new-session) sets for the agent about to start: the process niceness and the
 * autogroup niceness it gets alongside the agents already running.
 */
export function agentPriority(): { niceness: number; groupNiceness: number } {
  return {
    niceness: agentNiceness(getPriority()),
    groupNiceness: agentGroupNiceness(autogroupOf('self')?.nice ?? 0, running.size + 1),
  }
}

/** Sets the niceness of `pid`'s group, unless it is the daemon's own group or the root group (none of its own). */
function setGroupNiceness(pid: number, own: Autogroup, niceness: number): void {
  const group = autogroupOf(pid)
  if (!group || group.name === own.name || group.name === ROOT_GROUP.name || group.nice === niceness) return
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(niceness))
  } catch {
    // Autogroups off (the file refuses writes), not allowed (below 0 needs privilege), or the process is gone.
  }
}

/** Gives every running agent's group the niceness their number calls for, if it changed. */
function regroup(own: Autogroup): void {
  const niceness = agentGroupNiceness(own.nice, running.size)
  if (niceness === runningNiceness) return
  runningNiceness = niceness
  for (const [pid, started] of running)
    if (started !== undefined && startTimeOf(pid) === started) setGroupNiceness(pid, own, niceness)
}

/**
 * Counts a started agent (`pid` leads its session) in the shared weight until the returned function is
 * called at its end. Best effort: a kernel without autogroups, or a process already gone, leaves it as is.
 * A sandboxed agent's own session is inside bubblewrap, out of reach: it keeps what agentPriority gave it.
 */
export function trackAgent(pid: number): () => void {
  const own = autogroupOf('self')
  if (!own) return () => {}
  running.set(pid, startTimeOf(pid))
  setGroupNiceness(pid, own, agentGroupNiceness(own.nice, running.size))
  regroup(own)
  return () => {
    if (running.delete(pid)) regroup(own)
  }
}

/**
 * Lowers a process below the daemon, and its group (when it leads one) as agentPriority would: what the
 * agent launcher does at spawn, for a process spawned by the daemon itself. Best effort: a process already
 * gone is left as it is.
 */
export function lowerAgentPriority(pid: number): void {
  const { niceness, groupNiceness } = agentPriority()
  try {
    setPriority(pid, niceness)
  } catch {
    // Gone already: nothing to lower.
  }
  const own = autogroupOf('self')
  if (own) setGroupNiceness(pid, own, groupNiceness)
}
