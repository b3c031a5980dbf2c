// Prints one plain closing line, "N passed, N failed" (", N skipped" when any), that any CI log reader
// understands, after vitest's own coloured summary.
import type { Reporter, TestModule } from 'vitest/node'

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed') failed++
        else skipped++
      }
    }
    // A module that failed to load has no tests but is a failure all the same.
    failed += testModules.filter(
      (testModule) => testModule.state() === 'failed' && [...testModule.children.allTests()].length === 0,
    ).length
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`)
  }
}
