// Timeouts that follow the machine's load. Default timeouts are sized for real processes on two cores with
// this suite alone; with another build or a second `npm test` beside it, every Node start-up, git and agent
// CLI takes several times as long, and a test that is merely slow must not fail as if it hung. So before each
// test file the default timeouts are scaled by how oversubscribed the CPUs are right now (loadFactor; the
// `hangar` commands of test/helpers/hangar-cli.ts scale theirs the same way). A test that really hangs
// still fails, only later.
import { vi } from 'vitest'
import { loadFactor } from '../helpers/load-factor.js'

const TEST_TIMEOUT_MS = 30_000
const HOOK_TIMEOUT_MS = 60_000
const factor = loadFactor()
vi.setConfig({
  testTimeout: Math.round(TEST_TIMEOUT_MS * factor),
  hookTimeout: Math.round(HOOK_TIMEOUT_MS * factor),
})
