import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.ts'],
    // A fresh PostgreSQL database for this run (dropped after), and the pinned real agent CLIs (cached).
    globalSetup: ['test/setup/postgres-global-setup.ts', 'test/setup/test-clis-global-setup.ts'],
    pool: 'forks',
    // A worker runs its files one after another in one process, without a fresh module graph for each:
    // the tests restore what they change (env, timers) and the daemons under test are processes of their
    // own. On two cores, a fork and a re-import per file were 124 s of a 1,499 s run (1,375 s without).
    isolate: false,
    // Two cores: two test files at a time.
    maxWorkers: 2,
    // Scaled up per test file by the machine's load: test/setup/load-aware-timeouts.ts.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['test/setup/load-aware-timeouts.ts'],
    // A skipped test hides a failure: treat `.only` as an error in CI.
    allowOnly: false,
    reporters: ['default', './test/setup/summary-reporter.ts'],
  },
})
