import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createUnifiedDiff } from './unified-diff.js'

const run = promisify(execFile)

/** Applies the diff with `git apply` to the old text and returns the result: the diff must be a real patch. */
async function applyWithGit(oldText: string | null, diff: string): Promise<string | null> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'hangar-diff-'))
  try {
    const file = path.join(directory, 'file.txt')
    if (oldText !== null) await writeFile(file, oldText)
    await writeFile(path.join(directory, 'change.patch'), diff)
    await run('git', ['apply', 'change.patch'], { cwd: directory })
    return await readFile(file, 'utf8').catch(() => null)
  } finally {
    await rm(directory, { recursive: true, force: true })
  }
}

/** A deterministic pseudo-random generator, so a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

describe('unified-diff', () => {
  it('shows a one-line change with three lines of context and diff(1) ranges', () => {
    const oldText = ['1', '2', '3', '4', '5', '6', '7', '8', '9', ''].join('\n')
    const newText = oldText.replace('5', 'five')
    const diff = createUnifiedDiff({ path: 'src/a.ts', oldText, newText })
    expect(diff.text).toBe(
      [
        '--- a/src/a.ts',
        '+++ b/src/a.ts',
        '@@ -2,7 +2,7 @@',
        ' 2',
        ' 3',
        ' 4',
        '-5',
        '+five',
        ' 6',
        ' 7',
        ' 8',
        '',
      ].join('\n'),
    )
    expect(diff).toMatchObject({ added: 1, removed: 1, truncated: false })
  })

  it('uses /dev/null for a created and a deleted file', () => {
    expect(createUnifiedDiff({ path: 'new.txt', oldText: null, newText: 'a\nb\n' }).text).toBe(
      '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n',
    )
    expect(createUnifiedDiff({ path: 'old.txt', oldText: 'a\n', newText: null }).text).toBe(
      '--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n',
    )
  })

  it('marks a missing final newline', () => {
    const diff = createUnifiedDiff({ path: 'f', oldText: 'a\nb', newText: 'a\nb\n' })
    expect(diff.text).toBe('--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n')
  })

  it('returns an empty diff when nothing changed', () => {
    expect(createUnifiedDiff({ path: 'f', oldText: 'same\n', newText: 'same\n' })).toEqual({
      text: '',
      added: 0,
      removed: 0,
      truncated: false,
    })
  })

  it('splits distant changes into separate hunks and merges close ones', () => {
    const lines = Array.from({ length: 40 }, (_, index) => `line ${index + 1}`)
    const oldText = `${lines.join('\n')}\n`
    const far = createUnifiedDiff({
      path: 'f',
      oldText,
      newText: oldText.replace('line 2\n', 'two\n').replace('line 30\n', 'thirty\n'),
    })
    expect(far.text.match(/^@@/gm)).toHaveLength(2)
    const near = createUnifiedDiff({
      path: 'f',
      oldText,
      newText: oldText.replace('line 10\n', 'ten\n').replace('line 16\n', 'sixteen\n'),
    })
    expect(near.text.match(/^@@/gm)).toHaveLength(1)
  })

  it('caps a large diff with a note', () => {
    const newText = Array.from({ length: 5000 }, (_, index) => `row ${index}`).join('\n')
    const diff = createUnifiedDiff({ path: 'big', oldText: null, newText, maxCharacters: 2000 })
    expect(diff.truncated).toBe(true)
    expect(diff.text.length).toBeLessThan(2200)
    expect(diff.text).toMatch(/diff truncated: \d+ more lines not shown/)
    expect(diff.added).toBe(5000)
  })

  it('produces patches git apply accepts and that turn the old text into the new one', async () => {
    const next = random(7)
    const vocabulary = ['alpha', 'beta', 'gamma', 'delta', '', '}', '  return x']
    for (let round = 0; round < 25; round++) {
      const oldLines = Array.from(
        { length: Math.floor(next() * 40) },
        () => vocabulary[Math.floor(next() * 7)]!,
      )
      const newLines = oldLines.flatMap((line) => {
        const roll = next()
        if (roll < 0.1) return []
        if (roll < 0.2) return [line, vocabulary[Math.floor(next() * 7)]!]
        if (roll < 0.3) return [`${line} changed`]
        return [line]
      })
      const oldText = oldLines.join('\n') + (next() < 0.5 ? '\n' : '')
      const newText = newLines.join('\n') + (next() < 0.5 ? '\n' : '')
      const diff = createUnifiedDiff({ path: 'file.txt', oldText, newText })
      if (diff.text === '') {
        expect(newText).toBe(oldText)
        continue
      }
      expect(await applyWithGit(oldText, diff.text), `round ${round}:\n${diff.text}`).toBe(newText)
    }
  })

  it('falls back to a whole replacement when the edit distance is huge, and stays correct', async () => {
    const oldText = Array.from({ length: 3000 }, (_, index) => `old ${index}\n`).join('')
    const newText = Array.from({ length: 3000 }, (_, index) => `new ${index}\n`).join('')
    const diff = createUnifiedDiff({ path: 'file.txt', oldText, newText, maxCharacters: 10_000_000 })
    expect(diff).toMatchObject({ added: 3000, removed: 3000 })
    expect(await applyWithGit(oldText, diff.text)).toBe(newText)
  })
})
