// Makes sure the pinned real agent CLIs are installed (into a cache outside the clone, keyed by
// test/clis/package.json) before any test runs. A failed install fails the run: tests that need a real
// CLI never skip.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export default function setup() {
  const script = path.resolve(
    path.dirname(fileURLToPath(import.meta.url)),
    '../../scripts/install-test-clis.mjs',
  )
  const result = spawnSync(process.execPath, [script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  })
  if (result.status !== 0) {
    throw new Error(`installing the pinned test CLIs failed (exit ${result.status}); run: node ${script}`)
  }
}
