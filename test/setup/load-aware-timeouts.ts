// Timeouts that follow the machine's load. Default timeouts are sized for real processes on two cores with
// this suite alone; with another build or a second `npm test` beside it, every Node start-up, git and agent
// CLI takes several times as long, and a test that is merely slow must not fail as if it hung. So before each
// test file the default timeouts are scaled by how oversubscribed the CPUs are right now (the 1-minute load
// average per core, at least 1×, at most 4×). A test that really hangs still fails, only later.
import os from 'node:os'
import { vi } from 'vitest'

const TEST_TIMEOUT_MS = 30_000
const HOOK_TIMEOUT_MS = 60_000
const MAX_FACTOR = 4

export function loadFactor(loadAverage = os.loadavg()[0] ?? 0, cores = os.availableParallelism()): number {
  return Math.min(MAX_FACTOR, Math.max(1, loadAverage / cores))
}

const factor = loadFactor()
vi.setConfig({
  testTimeout: Math.round(TEST_TIMEOUT_MS * factor),
  hookTimeout: Math.round(HOOK_TIMEOUT_MS * factor),
})
