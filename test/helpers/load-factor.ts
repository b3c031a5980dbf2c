// How oversubscribed the CPUs are right now: the 1-minute load average per core, at least 1×, at most 4×.
// Default timeouts are sized for real processes on two cores with the suite alone; under more load every
// Node start-up, git and agent CLI takes several times as long, and a slow step must not fail as if it hung.
import os from 'node:os'

const MAX_FACTOR = 4

export function loadFactor(loadAverage = os.loadavg()[0] ?? 0, cores = os.availableParallelism()): number {
  return Math.min(MAX_FACTOR, Math.max(1, loadAverage / cores))
}
