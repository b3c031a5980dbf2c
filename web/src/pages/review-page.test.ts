import { describe, expect, it } from 'vitest'
import { diffLines } from './review-page'

describe('diffLines', () => {
  it("numbers the new side's lines, skips removed ones and the file header", () => {
    const patch = [
      'diff --git a/a.txt b/a.txt',
      'index 1..2 100644',
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1,3 +1,3 @@',
      ' one',
      '-two',
      '+deux',
      ' three',
      '@@ -10,2 +10,3 @@ context',
      ' ten',
      '+ten and a half',
      '\\ No newline at end of file',
      '',
    ].join('\n')
    expect(diffLines(patch).map((row) => [row.kind, row.line])).toEqual([
      ['hunk', undefined],
      ['ctx', 1],
      ['del', undefined],
      ['add', 2],
      ['ctx', 3],
      ['hunk', undefined],
      ['ctx', 10],
      ['add', 11],
    ])
  })
})
