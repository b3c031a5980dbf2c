import { describe, expect, it } from 'vitest'
import type { Attempt, AttemptGroup } from '../core/api-types.js'
import { describeFinishedAttempt, formatAttemptsTable } from './attempts-output.js'

const attempt = (overrides: Partial<Attempt>): Attempt => ({
  conversationId: 'conv_1',
  agent: 'claude-code',
  runId: 'run_1',
  workspaceId: 'ws_1',
  status: 'succeeded',
  finished: true,
  durationMs: 12_340,
  tokens: { input: 1200, output: 340, cacheRead: 0, cacheWrite: 0 },
  costUsd: 0.0123,
  costSource: 'proxy',
  filesChanged: 2,
  additions: 10,
  deletions: 3,
  check: { command: 'npm test', status: 'passed', exitCode: 0, output: 'ok' },
  picked: false,
  discardedAt: null,
  ...overrides,
})

describe('attempts output', () => {
  it('shows attempts side by side, with unknown costs and missing figures said so', () => {
    const group: AttemptGroup = {
      id: 'atg_1',
      projectId: 'prj_1',
      prompt: 'p',
      baseRef: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      finished: true,
      pickedConversationId: 'conv_1',
      pickedAt: null,
      attempts: [
        attempt({ picked: true }),
        attempt({
          conversationId: 'conv_2',
          agent: 'builtin',
          status: 'awaiting_confirmation',
          tokens: null,
          costUsd: null,
          costSource: 'unknown',
          filesChanged: null,
          additions: null,
          deletions: null,
          check: { command: 'npm test', status: 'failed', exitCode: 1, output: 'x' },
          discardedAt: '2026-01-01T00:00:00.000Z',
        }),
      ],
    }
    expect(formatAttemptsTable(group).split('\n')).toEqual([
      'AGENT          STATUS                             TIME   TOKENS IN/OUT  COST     FILES  +/-     CHECK            CONVERSATION',
      '* claude-code  succeeded                          12.3s  1200/340       $0.0123  2      +10 -3  passed (exit 0)  conv_1',
      'builtin        awaiting_confirmation (discarded)  12.3s  -              unknown  -      -       failed (exit 1)  conv_2',
      '',
    ])
    expect(
      describeFinishedAttempt(
        attempt({ check: { command: null, status: 'none', exitCode: null, output: null } }),
      ),
    ).toBe('✓ claude-code succeeded in 12.3s · check none (conversation conv_1)')
  })
})
