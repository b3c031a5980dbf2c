import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { GLOB_MAX_RESULTS, globTool, splitLiteralPrefix } from './glob-tool.js'
import { GREP_MAX_MATCHES, grepTool } from './grep-tool.js'
import { LIST_FILES_MAX_ENTRIES, listFilesTool } from './list-files-tool.js'
import { READ_FILE_MAX_LINE_CHARACTERS, readFileTool } from './read-file-tool.js'
import type { ToolContext } from './types.js'
import { globToRegExp } from './workspace-walk.js'

describe('read tools', () => {
  let workspace: string
  let context: ToolContext

  async function put(relativePath: string, content: string | Buffer): Promise<void> {
    await mkdir(path.dirname(path.join(workspace, relativePath)), { recursive: true })
    await writeFile(path.join(workspace, relativePath), content)
  }

  beforeEach(async () => {
    workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-read-')))
    context = { workspace }
    await put('README.md', '# Project\n')
    await put('src/index.ts', 'export function main() {\n  return 1\n}\n')
    await put('src/util/strings.ts', 'export const name = "main"\n')
    await put('src/util/strings.test.ts', 'it("works")\n')
    await put('.git/HEAD', 'ref: refs/heads/main\n')
    await put('node_modules/lib/index.js', 'function main() {}\n')
    await put('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x6d, 0x61, 0x69, 0x6e]))
  })

  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true })
  })

  describe('list_files', () => {
    it('lists one directory with directories marked by a slash, skipping .git and node_modules', async () => {
      const output = await listFilesTool.run({ path: '.', recursive: false }, context)
      expect(output.content).toBe(['README.md', 'image.png', 'src/'].join('\n'))
    })

    it('lists recursively with workspace-relative paths', async () => {
      const output = await listFilesTool.run({ path: 'src', recursive: true }, context)
      expect(output.content.split('\n')).toEqual([
        'src/index.ts',
        'src/util/',
        'src/util/strings.test.ts',
        'src/util/strings.ts',
      ])
    })

    it('caps a long listing with a note', async () => {
      for (let index = 0; index < LIST_FILES_MAX_ENTRIES + 5; index++) await put(`many/f${index}.txt`, '')
      const output = await listFilesTool.run({ path: 'many', recursive: false }, context)
      const lines = output.content.split('\n')
      expect(lines).toHaveLength(LIST_FILES_MAX_ENTRIES + 1)
      expect(lines.at(-1)).toMatch(/Listing stopped at 1000 entries/)
    })

    it('answers a missing path or a file with a model-readable error', async () => {
      expect(await listFilesTool.run({ path: 'nope', recursive: false }, context)).toMatchObject({
        isError: true,
      })
      const file = await listFilesTool.run({ path: 'README.md', recursive: false }, context)
      expect(file).toEqual({
        content: 'README.md is not a directory; use read_file to read a file.',
        isError: true,
      })
    })
  })

  describe('read_file', () => {
    beforeEach(async () => {
      await put('lines.txt', Array.from({ length: 12 }, (_, index) => `line ${index + 1}`).join('\n') + '\n')
    })

    it('returns numbered lines', async () => {
      const output = await readFileTool.run({ path: 'src/index.ts' }, context)
      expect(output).toEqual({ content: '1\texport function main() {\n2\t  return 1\n3\t}' })
    })

    it('reads a line range and says how to continue', async () => {
      const output = await readFileTool.run({ path: 'lines.txt', offset: 9, limit: 2 }, context)
      expect(output.content).toBe(
        ' 9\tline 9\n10\tline 10\n(Showing lines 9-10 of 12. Call read_file with offset 11 to read more.)',
      )
      const tail = await readFileTool.run({ path: 'lines.txt', offset: 11 }, context)
      expect(tail.content).toBe('11\tline 11\n12\tline 12')
    })

    it('refuses an offset past the end with the valid range', async () => {
      const output = await readFileTool.run({ path: 'lines.txt', offset: 13 }, context)
      expect(output).toEqual({
        content: 'lines.txt has 12 lines; offset 13 is past the end. Use an offset from 1 to 12.',
        isError: true,
      })
    })

    it('refuses binary files and directories', async () => {
      const binary = await readFileTool.run({ path: 'image.png' }, context)
      expect(binary).toMatchObject({ isError: true })
      expect(binary.content).toContain('binary file')
      const directory = await readFileTool.run({ path: 'src' }, context)
      expect(directory).toMatchObject({ isError: true, content: expect.stringContaining('is a directory') })
    })

    it('truncates very long lines and caps the output of a huge file', async () => {
      await put('long.txt', `${'x'.repeat(READ_FILE_MAX_LINE_CHARACTERS + 50)}\nshort\n`)
      const long = await readFileTool.run({ path: 'long.txt' }, context)
      expect(long.content).toContain(`[line truncated, ${READ_FILE_MAX_LINE_CHARACTERS + 50} characters]`)
      await put('huge.txt', Array.from({ length: 3000 }, () => 'y'.repeat(100)).join('\n'))
      const huge = await readFileTool.run({ path: 'huge.txt', limit: 3000 }, context)
      expect(huge.content.length).toBeLessThan(110_000)
      expect(huge.content).toMatch(
        /\(Showing lines 1-\d+ of 3000\. Call read_file with offset \d+ to read more\.\)$/,
      )
    })

    it('says so for an empty file', async () => {
      await put('empty.txt', '')
      expect(await readFileTool.run({ path: 'empty.txt' }, context)).toEqual({
        content: 'empty.txt is empty.',
      })
    })
  })

  describe('glob', () => {
    it('compiles glob syntax', () => {
      const matches = (pattern: string, candidate: string): boolean => globToRegExp(pattern)!.test(candidate)
      expect(matches('**/*.ts', 'a.ts')).toBe(true)
      expect(matches('**/*.ts', 'src/deep/a.ts')).toBe(true)
      expect(matches('*.ts', 'src/a.ts')).toBe(false)
      expect(matches('src/**', 'src/a/b.ts')).toBe(true)
      expect(matches('*.{ts,tsx}', 'view.tsx')).toBe(true)
      expect(matches('file?.[jt]s', 'file1.js')).toBe(true)
      expect(matches('[!a]*', 'abc')).toBe(false)
      expect(matches('a.b', 'axb')).toBe(false)
      expect(globToRegExp('{unclosed')).toBeNull()
      expect(splitLiteralPrefix('src/agent/**/*.ts')).toEqual({ prefix: 'src/agent', rest: '**/*.ts' })
    })

    it('finds files by pattern, skipping .git and node_modules', async () => {
      const output = await globTool.run({ pattern: '**/*.ts', path: '.' }, context)
      expect(output.content.split('\n')).toEqual([
        'src/index.ts',
        'src/util/strings.test.ts',
        'src/util/strings.ts',
      ])
      const everything = await globTool.run({ pattern: '**', path: '.' }, context)
      expect(everything.content).not.toMatch(/\.git\/|node_modules/)
    })

    it('matches relative to path and with a literal directory prefix', async () => {
      const fromSrc = await globTool.run({ pattern: '*.ts', path: 'src' }, context)
      expect(fromSrc.content).toBe('src/index.ts')
      const prefixed = await globTool.run({ pattern: 'src/util/*.test.ts', path: '.' }, context)
      expect(prefixed.content).toBe('src/util/strings.test.ts')
    })

    it('answers no match and a malformed pattern in words', async () => {
      expect(await globTool.run({ pattern: '**/*.rs', path: '.' }, context)).toEqual({
        content: 'No files match **/*.rs in the workspace.',
      })
      expect(await globTool.run({ pattern: 'nowhere/**', path: '.' }, context)).toEqual({
        content: 'No files match nowhere/** in the workspace.',
      })
      expect(await globTool.run({ pattern: '*.{ts', path: '.' }, context)).toMatchObject({ isError: true })
    })

    it('caps results with a note', async () => {
      for (let index = 0; index < GLOB_MAX_RESULTS + 3; index++) await put(`gen/g${index}.json`, '{}')
      const output = await globTool.run({ pattern: 'gen/*.json', path: '.' }, context)
      const lines = output.content.split('\n')
      expect(lines).toHaveLength(GLOB_MAX_RESULTS + 1)
      expect(lines.at(-1)).toMatch(/Showing the first 500 matches/)
    })
  })

  describe('grep', () => {
    it('returns path:line: text, skipping binary files, .git and node_modules', async () => {
      const output = await grepTool.run({ pattern: 'main', path: '.', case_insensitive: false }, context)
      expect(output.content.split('\n')).toEqual([
        'src/index.ts:1: export function main() {',
        'src/util/strings.ts:1: export const name = "main"',
      ])
    })

    it('filters by a file-name glob or a path glob, and searches a single file', async () => {
      const byName = await grepTool.run(
        { pattern: 'it|main', path: '.', glob: '*.test.ts', case_insensitive: false },
        context,
      )
      expect(byName.content).toBe('src/util/strings.test.ts:1: it("works")')
      const byPath = await grepTool.run(
        { pattern: 'export', path: 'src', glob: 'util/*.ts', case_insensitive: false },
        context,
      )
      expect(byPath.content).toBe('src/util/strings.ts:1: export const name = "main"')
      const single = await grepTool.run(
        { pattern: 'return', path: 'src/index.ts', case_insensitive: false },
        context,
      )
      expect(single.content).toBe('src/index.ts:2:   return 1')
    })

    it('honours case_insensitive and reports no matches in words', async () => {
      const insensitive = await grepTool.run(
        { pattern: 'PROJECT', path: '.', case_insensitive: true },
        context,
      )
      expect(insensitive.content).toBe('README.md:1: # Project')
      const none = await grepTool.run({ pattern: 'PROJECT', path: '.', case_insensitive: false }, context)
      expect(none).toEqual({ content: 'No matches for /PROJECT/ in the workspace (4 files searched).' })
    })

    it('answers an invalid regular expression with what to fix', async () => {
      const output = await grepTool.run({ pattern: 'foo(', path: '.', case_insensitive: false }, context)
      expect(output.isError).toBe(true)
      expect(output.content).toMatch(/not a valid regular expression.*escape special characters/)
    })

    it('caps matches with a note', async () => {
      await put(
        'many.txt',
        Array.from({ length: GREP_MAX_MATCHES + 10 }, (_, index) => `hit ${index}`).join('\n'),
      )
      const output = await grepTool.run(
        { pattern: '^hit', path: 'many.txt', case_insensitive: false },
        context,
      )
      const lines = output.content.split('\n')
      expect(lines).toHaveLength(GREP_MAX_MATCHES + 1)
      expect(lines.at(-1)).toMatch(/Showing the first 200 matches/)
    })
  })
})
