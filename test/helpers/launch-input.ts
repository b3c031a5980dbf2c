// Fixtures for adapter-definition unit tests: a complete LaunchInput and an AuthProbeInput over an
// in-memory set of files, plus the invariants every launch plan must keep.
import path from 'node:path'
import { expect } from 'vitest'
import type { AuthProbeInput, LaunchInput, LaunchPlan, ModelEndpoint } from '../../src/adapters/types.js'

export const TEST_API_KEY = 'sk-test-secret-4242'

export function launchInput(overrides: Partial<LaunchInput> = {}): LaunchInput {
  return {
    prompt: 'Please create a file. FILE=hello.txt',
    cwd: '/work/repo',
    runDir: '/data/runs/run-1',
    home: '/home/user',
    isolatedHome: false,
    env: Object.freeze({ PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', UNSET: undefined }),
    extraArgs: [],
    executable: { path: '/usr/local/bin/agent-cli' },
    timeoutSeconds: 600,
    ...overrides,
  }
}

export function endpoint(
  family: ModelEndpoint['family'],
  overrides: Partial<ModelEndpoint> = {},
): ModelEndpoint {
  const baseUrl =
    family === 'openai-chat' || family === 'openai-responses'
      ? 'http://127.0.0.1:7456/v1'
      : 'http://127.0.0.1:7456'
  return { family, baseUrl, apiKey: TEST_API_KEY, ...overrides }
}

/** The plan never carries the key in argv or in a file, and writes files only where it may. */
export function expectPlanInvariants(plan: LaunchPlan, input: LaunchInput): void {
  expect(plan.args.join('\n')).not.toContain(TEST_API_KEY)
  for (const file of plan.files) {
    expect(file.content).not.toContain(TEST_API_KEY)
    expect(path.isAbsolute(file.path)).toBe(true)
    const allowedRoots = input.isolatedHome ? [input.runDir, input.home] : [input.runDir]
    expect(allowedRoots.some((root) => file.path.startsWith(`${root}/`))).toBe(true)
  }
  expect(plan.env.HOME).toBe(input.home)
  expect(Object.values(plan.env).every((value) => typeof value === 'string')).toBe(true)
}

export function authProbeInput(options: {
  env?: Record<string, string>
  files?: Record<string, unknown>
  directories?: string[]
  home?: string
  now?: Date
}): AuthProbeInput {
  const files = options.files ?? {}
  const directories = options.directories ?? []
  return {
    env: options.env ?? {},
    home: options.home ?? '/home/user',
    exists: async (file) => file in files || directories.includes(file),
    readJson: async (file) => files[file],
    now: options.now ?? new Date('2026-06-01T00:00:00Z'),
  }
}
