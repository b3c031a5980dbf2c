// Issue 20 item 2: switching agent mid-conversation lost the context — the next agent never saw the
// others' turns. The handoff picks the turns an agent has not seen (all of them for a new session, those
// after its own last run when it resumes), renders each (user message, final text, files with a diff
// stat, proposals decided) and bounds the block by the adapter's context window, the oldest turns
// summarised first, then left out; the newest always stays.
import { describe, expect, it } from 'vitest'
import {
  boundTurns,
  DEFAULT_CONTEXT_WINDOW_TOKENS,
  diffStat,
  formatHandoffBlock,
  handoffBudgetChars,
  type HandoffTurn,
  unseenTurns,
} from './handoff.js'

function turn(runId: string, overrides: Partial<HandoffTurn> = {}): HandoffTurn {
  return {
    runId,
    agent: 'claude-code',
    adapter: 'claude-code',
    prompt: `message of ${runId}`,
    status: 'succeeded',
    reason: null,
    finalText: `answer of ${runId}`,
    files: [],
    proposals: [],
    ...overrides,
  }
}

describe('handoff', () => {
  it('hands a new session every turn, and a resumed one only the turns after its own run', () => {
    const turns = [turn('run_1'), turn('run_2', { adapter: 'builtin', agent: 'builtin' }), turn('run_3')]
    expect(unseenTurns(turns).map((entry) => entry.runId)).toEqual(['run_1', 'run_2', 'run_3'])
    expect(unseenTurns(turns, 'run_1').map((entry) => entry.runId)).toEqual(['run_2', 'run_3'])
    expect(unseenTurns(turns, 'run_3')).toEqual([])
    // A resumed run that is not among them (another conversation's): nothing was seen.
    expect(unseenTurns(turns, 'run_9')).toHaveLength(3)
  })

  it('renders each turn in order: the user message, who answered, its text, files with a diff stat, proposals', () => {
    const block = formatHandoffBlock(
      [
        turn('run_1', {
          prompt: 'Write notes.txt',
          finalText: 'I wrote notes.txt.',
          files: [
            { path: 'notes.txt', kind: 'create', added: 3, removed: 0 },
            { path: 'old.txt', kind: 'delete' },
          ],
        }),
        turn('run_2', {
          agent: 'helper',
          adapter: 'builtin',
          prompt: 'Now add a line',
          finalText: 'Proposed it.',
          status: 'awaiting_confirmation',
          reason: '1 proposal(s) wait for a decision',
          proposals: [{ summary: 'Update notes.txt', status: 'rejected' }],
        }),
      ],
      { mode: 'new-session', budgetChars: 10_000 },
    )!
    expect(block.text).toContain('This conversation (and its workspace) has history from before this session')
    const first = block.text.indexOf('User: Write notes.txt')
    const second = block.text.indexOf('User: Now add a line')
    expect(first).toBeGreaterThan(0)
    expect(second).toBeGreaterThan(first)
    expect(block.text).toContain('claude-code replied: I wrote notes.txt.')
    expect(block.text).toContain('- notes.txt (create, +3 -0)')
    expect(block.text).toContain('- old.txt (delete)')
    expect(block.text).toContain(
      'helper (builtin) replied [run awaiting_confirmation: 1 proposal(s) wait for a decision]: Proposed it.',
    )
    expect(block.text).toContain('- Update notes.txt: rejected')
    expect(block.text.trimEnd().endsWith('The user now says: ---')).toBe(true)
    expect(block.event).toEqual({
      type: 'handoff',
      mode: 'new-session',
      runs: ['run_1', 'run_2'],
      chars: block.text.length,
      budgetChars: 10_000,
      summarised: 0,
      omitted: 0,
    })
  })

  it('says "since you last spoke" to a resumed session, and hands over nothing when nothing is new', () => {
    const block = formatHandoffBlock([turn('run_2')], { mode: 'since-last', budgetChars: 10_000 })!
    expect(block.text).toContain('Since you last spoke in this conversation')
    expect(formatHandoffBlock([], { mode: 'since-last', budgetChars: 10_000 })).toBeUndefined()
  })

  it('summarises the oldest turns first when over the bound, then leaves them out; the newest stays whole', () => {
    const turns = [turn('run_1'), turn('run_2'), turn('run_3')]
    // A turn takes 1000 characters in full, 100 summarised.
    const measure = (_turn: HandoffTurn, detail: 'full' | 'summary') => (detail === 'full' ? 1_000 : 100)
    const details = (budget: number) => {
      const bounded = boundTurns(turns, budget, measure)
      return { details: bounded.turns.map((entry) => entry.detail), ...bounded, turns: undefined }
    }
    expect(details(3_000)).toMatchObject({ details: ['full', 'full', 'full'], summarised: 0, omitted: 0 })
    expect(details(2_100)).toMatchObject({ details: ['summary', 'full', 'full'], summarised: 1 })
    expect(details(1_200)).toMatchObject({ details: ['summary', 'summary', 'full'], summarised: 2 })
    expect(details(1_100)).toMatchObject({
      details: ['omitted', 'summary', 'full'],
      summarised: 1,
      omitted: 1,
    })
    expect(details(1_000)).toMatchObject({ details: ['omitted', 'omitted', 'full'], omitted: 2 })
    // The newest alone is over: it is summarised (and the block cut to size), never left out.
    expect(details(500)).toMatchObject({ details: ['omitted', 'omitted', 'summary'], summarised: 1 })
  })

  it('keeps the block within its budget, saying what it left out', () => {
    const turns = Array.from({ length: 30 }, (_, index) =>
      turn(`run_${String(index).padStart(2, '0')}`, { finalText: 'x'.repeat(2_000) }),
    )
    const block = formatHandoffBlock(turns, { mode: 'new-session', budgetChars: 8_000 })!
    expect(block.text.length).toBeLessThanOrEqual(8_000)
    expect(block.event.omitted).toBeGreaterThan(0)
    expect(block.text).toContain(
      `(${block.event.omitted} earlier turn(s) left out to fit the context window.)`,
    )
    // The newest turn is there, in full.
    expect(block.text).toContain(`User: message of run_29\nclaude-code replied: ${'x'.repeat(2_000)}`)
    expect(block.text).not.toContain('message of run_00')

    // A newest turn larger than the whole budget is cut to it.
    const huge = formatHandoffBlock([turn('run_1', { finalText: 'y'.repeat(50_000) })], {
      mode: 'new-session',
      budgetChars: 5_000,
    })!
    expect(huge.text.length).toBeLessThanOrEqual(5_000)
    expect(huge.event.summarised).toBe(1)
  })

  it('sizes the budget from the context window hint, with a default when the adapter names none', () => {
    expect(handoffBudgetChars(200_000)).toBeGreaterThan(handoffBudgetChars(100_000))
    expect(handoffBudgetChars(null)).toBe(handoffBudgetChars(DEFAULT_CONTEXT_WINDOW_TOKENS))
    // A quarter of the window at most, in characters of about three per token.
    expect(handoffBudgetChars(200_000)).toBe(150_000)
  })

  it('counts added and removed lines of a diff, not its headers', () => {
    expect(diffStat('--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n same')).toEqual({
      added: 2,
      removed: 1,
    })
  })
})
