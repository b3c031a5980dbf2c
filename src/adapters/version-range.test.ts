// Issue 18 item 9: a CLI version outside the range an adapter was tested with must be told apart from one
// inside it, for the forms the adapter definitions use (tilde, caret, comparators, date versions).
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { createDefaultAdapterRegistry } from './default-adapters.js'
import { isVersionRange, versionInRange } from './version-range.js'

describe('versionInRange', () => {
  it.each([
    ['2.1.330', '~2.1.330', true],
    ['2.1.400', '~2.1.330', true],
    ['2.2.0', '~2.1.330', false],
    ['2.1.329', '~2.1.330', false],
    ['0.61.3', '^0.61.0', true],
    ['0.62.0', '^0.61.0', false],
    ['1.9.0', '^1.0.102', true],
    ['2.0.0', '^1.0.102', false],
    ['2026.09.01-fake0001', '~2026.9.1', true],
    ['2027.1.0', '~2026.9.1', false],
    ['1.5.0', '>=1.2.3 <2', true],
    ['2.0.0', '>=1.2.3 <2', false],
    ['3.1.0', '1.x || 3.1.x', true],
    ['2.0.0', '1.x || 3.1.x', false],
    ['1.18.33', '1.18.33', true],
    ['1.18.34', '1.18.33', false],
  ])('%s in %s is %s', (version, range, expected) => {
    expect(versionInRange(version, range)).toBe(expected)
  })

  it('answers null for a version without numbers or a range it does not understand', () => {
    expect(versionInRange('unknown', '~1.0.0')).toBeNull()
    expect(versionInRange('1.0.0', 'latest')).toBeNull()
    expect(isVersionRange('latest')).toBe(false)
    expect(isVersionRange('>=1.0.0 <2')).toBe(true)
  })
})

describe('tested versions of the adapters', () => {
  it('holds the CLI versions pinned in test/clis/package.json', () => {
    const pins = JSON.parse(
      readFileSync(new URL('../../test/clis/package.json', import.meta.url), 'utf8'),
    ) as {
      dependencies: Record<string, string>
      openclaw: { package: string }
    }
    const pinned: Record<string, string> = {
      'claude-code': pins.dependencies['@anthropic-ai/claude-code']!,
      codex: pins.dependencies['@openai/codex']!,
      gemini: pins.dependencies['@google/gemini-cli']!,
      opencode: pins.dependencies['opencode-ai']!,
      copilot: pins.dependencies['@github/copilot']!,
      openclaw: pins.openclaw.package.split('@').at(-1)!,
      // The fake Cursor Agent's version (no registry ships the real one).
      'cursor-agent': '2026.09.01-fake0001',
    }
    for (const adapter of createDefaultAdapterRegistry().all()) {
      expect(isVersionRange(adapter.testedVersions), adapter.id).toBe(true)
      expect(versionInRange(pinned[adapter.id]!, adapter.testedVersions), adapter.id).toBe(true)
    }
  })
})
