import { createHash } from 'node:crypto'
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { deleteFileTool } from './delete-file-tool.js'
import { computeEdit, editFileTool } from './edit-file-tool.js'
import type { Proposal, ToolContext, ToolOutput } from './types.js'
import { ToolConflict } from './types.js'
import { writeFileTool } from './write-file-tool.js'

async function snapshot(directory: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {}
  for (const name of await readdir(directory)) {
    const full = path.join(directory, name)
    const stats = await lstat(full)
    if (stats.isSymbolicLink()) result[full] = `link:${await readlink(full)}`
    else if (stats.isDirectory()) Object.assign(result, { [full]: 'dir' }, await snapshot(full))
    else result[full] = `file:${(await readFile(full)).toString('base64')}`
  }
  return result
}

function asProposal(output: Proposal | ToolOutput): Proposal {
  if ('content' in output) throw new Error(`expected a proposal, got: ${output.content}`)
  return output
}

function asOutput(output: Proposal | ToolOutput): ToolOutput {
  if (!('content' in output))
    throw new Error(`expected a model-readable error, got a proposal: ${output.summary}`)
  return output
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')
const original = 'line 1\nline 2\nline 3\n'

describe('write tools', () => {
  let workspace: string
  let context: ToolContext
  const read = (relativePath: string): Promise<string> => readFile(path.join(workspace, relativePath), 'utf8')

  beforeEach(async () => {
    workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-write-')))
    context = { workspace }
    await mkdir(path.join(workspace, 'src'))
    await writeFile(path.join(workspace, 'src', 'a.ts'), original)
  })

  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true })
  })

  describe('write_file', () => {
    it('proposes a create as safe_create with a /dev/null diff, changing nothing until apply', async () => {
      const before = await snapshot(workspace)
      const input = { path: 'new/dir/b.ts', content: 'one\ntwo\n' }
      const proposal = asProposal(await writeFileTool.propose(input, context))
      expect(proposal).toEqual({
        summary: 'Create new/dir/b.ts (2 lines)',
        diff: '--- /dev/null\n+++ b/new/dir/b.ts\n@@ -0,0 +1,2 @@\n+one\n+two\n',
        classification: 'safe_create',
        precondition: { path: 'new/dir/b.ts', sha256: null },
      })
      expect(await snapshot(workspace)).toEqual(before)
      expect(await writeFileTool.apply(input, context, proposal)).toEqual({
        content: 'Created new/dir/b.ts (2 lines).',
      })
      expect(await read('new/dir/b.ts')).toBe('one\ntwo\n')
    })

    it('classifies an overwrite as destructive_update with the right diff', async () => {
      const before = await snapshot(workspace)
      const input = { path: 'src/a.ts', content: 'line 1\nline two\nline 3\n' }
      const proposal = asProposal(await writeFileTool.propose(input, context))
      expect(proposal).toEqual({
        summary: 'Overwrite src/a.ts (3 lines, was 3; +1 −1)',
        diff: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n line 1\n-line 2\n+line two\n line 3\n',
        classification: 'destructive_update',
        precondition: { path: 'src/a.ts', sha256: sha256(original) },
      })
      expect(await snapshot(workspace)).toEqual(before)
      await writeFileTool.apply(input, context, proposal)
      expect(await read('src/a.ts')).toBe(input.content)
    })

    it('answers an overwrite with identical content as a no-op: no proposal, nothing written', async () => {
      const before = await snapshot(workspace)
      const same = asOutput(await writeFileTool.propose({ path: 'src/a.ts', content: original }, context))
      expect(same).toEqual({ content: 'src/a.ts already has exactly this content; nothing was written.' })
      await writeFile(path.join(workspace, 'blob.bin'), Buffer.from([1, 0, 2]))
      const binary = asOutput(
        await writeFileTool.propose({ path: 'blob.bin', content: '\u0001\u0000\u0002' }, context),
      )
      expect(binary.isError).toBeUndefined()
      expect(await snapshot(workspace)).toEqual({
        ...before,
        [path.join(workspace, 'blob.bin')]: `file:${Buffer.from([1, 0, 2]).toString('base64')}`,
      })
      // One byte more is a change again, proposed as an overwrite.
      const changed = asProposal(
        await writeFileTool.propose({ path: 'src/a.ts', content: `${original}x` }, context),
      )
      expect(changed.classification).toBe('destructive_update')
    })

    it('conflicts when the file changed, or appeared, after the proposal, and writes nothing', async () => {
      const overwrite = { path: 'src/a.ts', content: 'mine\n' }
      const overwriteProposal = asProposal(await writeFileTool.propose(overwrite, context))
      await writeFile(path.join(workspace, 'src', 'a.ts'), 'someone else\n')
      await expect(writeFileTool.apply(overwrite, context, overwriteProposal)).rejects.toThrow(
        new ToolConflict('src/a.ts changed since the proposal; read it again and propose the write again.'),
      )
      expect(await read('src/a.ts')).toBe('someone else\n')

      const create = { path: 'src/b.ts', content: 'mine\n' }
      const createProposal = asProposal(await writeFileTool.propose(create, context))
      await writeFile(path.join(workspace, 'src', 'b.ts'), 'theirs\n')
      await expect(writeFileTool.apply(create, context, createProposal)).rejects.toBeInstanceOf(ToolConflict)
      expect(await read('src/b.ts')).toBe('theirs\n')
    })

    it('refuses a directory target and a path under a file', async () => {
      const directory = asOutput(await writeFileTool.propose({ path: 'src', content: 'x' }, context))
      expect(directory).toMatchObject({ isError: true, content: expect.stringContaining('is a directory') })
      const underFile = asOutput(
        await writeFileTool.propose({ path: 'src/a.ts/b.ts', content: 'x' }, context),
      )
      expect(underFile.content).toBe(
        'src/a.ts is a file, so src/a.ts/b.ts cannot be created under it; choose another path.',
      )
    })
  })

  describe('edit_file', () => {
    it('proposes a safe_update whose diff shows the change, and applies it', async () => {
      const before = await snapshot(workspace)
      const input = {
        path: 'src/a.ts',
        old_string: 'line 2',
        new_string: 'line 2a\nline 2b',
        replace_all: false,
      }
      const proposal = asProposal(await editFileTool.propose(input, context))
      expect(proposal).toEqual({
        summary: 'Edit src/a.ts (1 replacement, +2 −1 lines)',
        diff: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,4 @@\n line 1\n-line 2\n+line 2a\n+line 2b\n line 3\n',
        classification: 'safe_update',
        precondition: { path: 'src/a.ts', sha256: sha256(original) },
      })
      expect(await snapshot(workspace)).toEqual(before)
      expect(await editFileTool.apply(input, context, proposal)).toEqual({
        content: 'Edited src/a.ts (1 replacement).',
      })
      expect(await read('src/a.ts')).toBe('line 1\nline 2a\nline 2b\nline 3\n')
    })

    it('answers 0 or 2 matches with what to do, and replaces every match with replace_all', async () => {
      const none = asOutput(
        await editFileTool.propose(
          { path: 'src/a.ts', old_string: 'line 9', new_string: 'x', replace_all: false },
          context,
        ),
      )
      expect(none).toEqual({
        content:
          'old_string was not found in src/a.ts. Read the file again and copy the exact text, including whitespace and indentation.',
        isError: true,
      })
      const twice = asOutput(
        await editFileTool.propose(
          { path: 'src/a.ts', old_string: 'line', new_string: 'row', replace_all: false },
          context,
        ),
      )
      expect(twice.content).toBe(
        'old_string occurs 3 times in src/a.ts; include more surrounding lines so it matches exactly once, or set replace_all to true to change every occurrence.',
      )
      const input = { path: 'src/a.ts', old_string: 'line', new_string: 'row', replace_all: true }
      const proposal = asProposal(await editFileTool.propose(input, context))
      expect(proposal.summary).toBe('Edit src/a.ts (3 replacements, +3 −3 lines)')
      await editFileTool.apply(input, context, proposal)
      expect(await read('src/a.ts')).toBe('row 1\nrow 2\nrow 3\n')
    })

    it('keeps $ patterns in new_string literal and matches LF text in a CRLF file', () => {
      const dollar = computeEdit(
        'a = b\n',
        { path: 'f', old_string: 'b', new_string: "$&$'", replace_all: false },
        'f',
      )
      expect(dollar).toEqual({ ok: true, newText: "a = $&$'\n", replacements: 1 })
      const crlf = computeEdit(
        'one\r\ntwo\r\n',
        { path: 'f', old_string: 'one\ntwo', new_string: '1\n2', replace_all: false },
        'f',
      )
      expect(crlf).toEqual({ ok: true, newText: '1\r\n2\r\n', replacements: 1 })
    })

    it('refuses a missing file, a binary file and an edit that changes nothing', async () => {
      const missing = asOutput(
        await editFileTool.propose(
          { path: 'src/nope.ts', old_string: 'a', new_string: 'b', replace_all: false },
          context,
        ),
      )
      expect(missing.content).toContain('does not exist')
      await writeFile(path.join(workspace, 'blob.bin'), Buffer.from([1, 0, 2]))
      const binary = asOutput(
        await editFileTool.propose(
          { path: 'blob.bin', old_string: '\u0001', new_string: 'x', replace_all: false },
          context,
        ),
      )
      expect(binary.content).toBe('blob.bin is a binary file; edit_file only edits text.')
      const same = asOutput(
        await editFileTool.propose(
          { path: 'src/a.ts', old_string: 'line 1', new_string: 'line 1', replace_all: false },
          context,
        ),
      )
      expect(same.content).toContain('identical')
    })

    it('conflicts when the file changed between propose and apply, and writes nothing', async () => {
      const input = { path: 'src/a.ts', old_string: 'line 3', new_string: 'line three', replace_all: false }
      const proposal = asProposal(await editFileTool.propose(input, context))
      await writeFile(path.join(workspace, 'src', 'a.ts'), `${original}line 4\n`)
      await expect(editFileTool.apply(input, context, proposal)).rejects.toThrow(
        'src/a.ts changed since the proposal; read it again and propose the edit again.',
      )
      expect(await read('src/a.ts')).toBe(`${original}line 4\n`)
    })
  })

  describe('delete_file', () => {
    it('proposes a destructive_delete with the removed lines, and deletes on apply', async () => {
      const before = await snapshot(workspace)
      const proposal = asProposal(await deleteFileTool.propose({ path: 'src/a.ts' }, context))
      expect(proposal).toEqual({
        summary: 'Delete src/a.ts (3 lines)',
        diff: '--- a/src/a.ts\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-line 1\n-line 2\n-line 3\n',
        classification: 'destructive_delete',
        precondition: { path: 'src/a.ts', sha256: sha256(original) },
      })
      expect(await snapshot(workspace)).toEqual(before)
      expect(await deleteFileTool.apply({ path: 'src/a.ts' }, context, proposal)).toEqual({
        content: 'Deleted src/a.ts.',
      })
      await expect(lstat(path.join(workspace, 'src', 'a.ts'))).rejects.toThrow(/ENOENT/)
    })

    it('answers a missing file and a directory with model-readable errors', async () => {
      const missing = asOutput(await deleteFileTool.propose({ path: 'src/gone.ts' }, context))
      expect(missing).toEqual({
        content: 'Path src/gone.ts does not exist; use list_files or glob to find the right path.',
        isError: true,
      })
      const directory = asOutput(await deleteFileTool.propose({ path: 'src' }, context))
      expect(directory.content).toBe('src is a directory; delete_file deletes one file at a time.')
    })

    it('conflicts when the file changed or vanished after the proposal', async () => {
      const proposal = asProposal(await deleteFileTool.propose({ path: 'src/a.ts' }, context))
      await writeFile(path.join(workspace, 'src', 'a.ts'), 'edited\n')
      await expect(deleteFileTool.apply({ path: 'src/a.ts' }, context, proposal)).rejects.toBeInstanceOf(
        ToolConflict,
      )
      expect(await read('src/a.ts')).toBe('edited\n')
      await rm(path.join(workspace, 'src', 'a.ts'))
      await expect(deleteFileTool.apply({ path: 'src/a.ts' }, context, proposal)).rejects.toThrow(
        'src/a.ts was deleted since the proposal; read it again and propose the deletion again.',
      )
    })
  })
})
