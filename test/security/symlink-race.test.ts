// Issue 17 item 9: writes, deletes and reads escape the workspace through a directory swapped for a
// symlink between the path check and the file operation. A racer process exchanges `swap/` (a real
// directory) with `swap-link` (a symlink to a directory outside the workspace) in a tight loop — with
// renameat2(RENAME_EXCHANGE) through python3 when it is there, with plain renames otherwise — while the
// built-in tools apply writes, edits and deletes, and read, list and search under `swap/`. Before the fix, about half
// the applied changes landed outside. Now: nothing outside changes and nothing outside is read; the raced
// operations are refused as conflicts.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { deleteFileTool } from '../../src/agent/tools/delete-file-tool.js'
import { editFileTool } from '../../src/agent/tools/edit-file-tool.js'
import { grepTool } from '../../src/agent/tools/grep-tool.js'
import { listFilesTool } from '../../src/agent/tools/list-files-tool.js'
import { readFileTool } from '../../src/agent/tools/read-file-tool.js'
import type { Proposal, ToolContext, ToolOutput, WriteTool } from '../../src/agent/tools/types.js'
import { ToolConflict } from '../../src/agent/tools/types.js'
import { writeFileTool } from '../../src/agent/tools/write-file-tool.js'

const COUNT = { creates: 40, overwrites: 25, edits: 25, deletes: 90, reads: 80, searches: 40 }

/** Exchanges two paths atomically and forever; prints `ready` after the first swap and the count on SIGTERM. */
const PYTHON_RACER = `
import ctypes, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
renameat2 = getattr(libc, 'renameat2', None)
def swap():
    if renameat2 is not None:
        return renameat2(-100, a, -100, b, 2)
    return libc.syscall(316, -100, a, -100, b, 2)
count = 0
while not stop:
    if swap() != 0:
        sys.stderr.write('renameat2 failed: errno %d\\n' % ctypes.get_errno())
        sys.exit(1)
    count += 1
    if count == 1:
        print('ready', flush=True)
print(count, flush=True)
`

/** The same with three renames (not atomic, so both names are briefly missing), for machines without python3. */
const NODE_RACER = `
const fs = require('node:fs')
const [a, b] = process.argv.slice(1)
const spare = a + '.racing'
let count = 0
let stop = false
process.on('SIGTERM', () => { stop = true })
function burst() {
  for (let index = 0; index < 500; index++) {
    fs.renameSync(a, spare); fs.renameSync(b, a); fs.renameSync(spare, b)
    if (++count === 1) console.log('ready')
  }
  if (stop) console.log(String(count))
  else setImmediate(burst)
}
burst()
`

function hasPython(): boolean {
  return spawnSync('python3', ['-c', 'import ctypes'], { stdio: 'ignore' }).status === 0
}

interface Racer {
  stop(): Promise<number>
}

async function startRacer(a: string, b: string): Promise<Racer> {
  const child: ChildProcess = hasPython()
    ? spawn('python3', ['-c', PYTHON_RACER, a, b], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, ['-e', NODE_RACER, a, b], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let errors = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (output.includes('ready')) resolve()
    }
    child.stdout!.on('data', check)
    void exited.then(() => reject(new Error(`the racer exited early: ${errors}`)))
  })
  return {
    async stop() {
      child.kill('SIGTERM')
      const code = await exited
      if (code !== 0) throw new Error(`the racer failed (${code}): ${errors}`)
      return Number(output.trim().split('\n').at(-1))
    },
  }
}

async function snapshot(directory: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {}
  for (const name of (await readdir(directory)).sort()) {
    result[name] = (await readFile(path.join(directory, name))).toString('base64')
  }
  return result
}

type Outcome = 'applied' | 'refused'

async function proposeAndApply<Input>(
  tool: WriteTool<Input>,
  input: Input,
  context: ToolContext,
): Promise<() => Promise<Outcome>> {
  const proposal = (await tool.propose(input, context)) as Proposal | ToolOutput
  if ('content' in proposal) throw new Error(`the proposal was refused: ${proposal.content}`)
  return async () => {
    try {
      const output = await tool.apply(input, context, proposal)
      if (output.isError) throw new Error(`apply failed outside a conflict: ${output.content}`)
      return 'applied'
    } catch (error) {
      if (error instanceof ToolConflict) return 'refused'
      throw error
    }
  }
}

describe('symlink race (issue 17 item 9)', () => {
  let root: string
  let workspace: string
  let outside: string
  let context: ToolContext

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-symlink-race-')))
    workspace = path.join(root, 'workspace')
    outside = path.join(root, 'outside')
    await mkdir(path.join(workspace, 'swap'), { recursive: true })
    await mkdir(outside)
    await symlink(outside, path.join(workspace, 'swap-link'))
    context = { workspace }
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('writes, edits, deletes and reads nothing outside the workspace while a directory is swapped for a symlink', async () => {
    // Each target exists with the same bytes inside and outside, so the precondition hash matches on
    // either side and only the path decides where the change lands; reads tell the sides apart.
    for (let index = 0; index < COUNT.overwrites; index++) {
      for (const side of [path.join(workspace, 'swap'), outside])
        await writeFile(path.join(side, `over-${index}.txt`), 'same bytes\n')
    }
    for (let index = 0; index < COUNT.edits; index++) {
      for (const side of [path.join(workspace, 'swap'), outside])
        await writeFile(path.join(side, `edit-${index}.txt`), 'before\n')
    }
    for (let index = 0; index < COUNT.deletes; index++) {
      for (const side of [path.join(workspace, 'swap'), outside])
        await writeFile(path.join(side, `del-${index}.txt`), 'doomed\n')
    }
    for (let index = 0; index < COUNT.reads; index++) {
      await writeFile(path.join(workspace, 'swap', `read-${index}.txt`), 'inside\n')
      await writeFile(path.join(outside, `read-${index}.txt`), 'OUTSIDE SECRET\n')
    }
    await writeFile(path.join(outside, 'outside-only-marker.txt'), 'OUTSIDE SECRET\n')
    const outsideBefore = await snapshot(outside)

    // Proposed before the race, as a model would while nothing was swapped yet.
    const writes: Array<() => Promise<Outcome>> = []
    for (let index = 0; index < COUNT.creates; index++)
      writes.push(
        await proposeAndApply(writeFileTool, { path: `swap/new-${index}.txt`, content: 'new\n' }, context),
      )
    for (let index = 0; index < COUNT.overwrites; index++)
      writes.push(
        await proposeAndApply(
          writeFileTool,
          { path: `swap/over-${index}.txt`, content: 'written\n' },
          context,
        ),
      )
    for (let index = 0; index < COUNT.edits; index++)
      writes.push(
        await proposeAndApply(
          editFileTool,
          { path: `swap/edit-${index}.txt`, old_string: 'before', new_string: 'after', replace_all: false },
          context,
        ),
      )
    const deletes: Array<() => Promise<Outcome>> = []
    for (let index = 0; index < COUNT.deletes; index++)
      deletes.push(await proposeAndApply(deleteFileTool, { path: `swap/del-${index}.txt` }, context))

    const racer = await startRacer(path.join(workspace, 'swap'), path.join(workspace, 'swap-link'))
    const writeOutcomes: Outcome[] = []
    const deleteOutcomes: Outcome[] = []
    const readOutputs: ToolOutput[] = []
    let swaps: number
    try {
      for (let index = 0; index < Math.max(writes.length, deletes.length, COUNT.reads); index++) {
        if (index < COUNT.searches) {
          readOutputs.push(await listFilesTool.run({ path: 'swap', recursive: false }, context))
          readOutputs.push(
            await grepTool.run({ pattern: 'SECR[E]T', path: 'swap', case_insensitive: false }, context),
          )
        }
        if (writes[index]) writeOutcomes.push(await writes[index]!())
        if (deletes[index]) deleteOutcomes.push(await deletes[index]!())
        if (index < COUNT.reads)
          readOutputs.push(await readFileTool.run({ path: `swap/read-${index}.txt` }, context))
      }
    } finally {
      swaps = await racer.stop()
    }

    const refused = {
      writes: writeOutcomes.filter((outcome) => outcome === 'refused').length,
      deletes: deleteOutcomes.filter((outcome) => outcome === 'refused').length,
      reads: readOutputs.filter((output) => output.isError).length,
    }
    const outsideAfter = await snapshot(outside)
    const escaped =
      new Set([...Object.keys(outsideBefore), ...Object.keys(outsideAfter)]).size -
      Object.keys(outsideBefore).filter((name) => outsideAfter[name] === outsideBefore[name]).length
    const leakedReads = readOutputs.filter((output) =>
      /OUTSIDE SECRET|outside-only-marker/.test(output.content),
    ).length
    console.info(
      `symlink race: ${swaps} swaps; ${escaped} changes and ${leakedReads} reads outside; refused ${refused.writes}/${writeOutcomes.length} writes, ` +
        `${refused.deletes}/${deleteOutcomes.length} deletes, ${refused.reads}/${readOutputs.length} reads`,
    )
    expect(swaps).toBeGreaterThan(0)
    expect(writeOutcomes).toHaveLength(COUNT.creates + COUNT.overwrites + COUNT.edits)
    expect(deleteOutcomes).toHaveLength(COUNT.deletes)

    // Nothing outside was created, changed or deleted, and no read returned outside bytes.
    expect(escaped).toBe(0)
    expect(outsideAfter).toEqual(outsideBefore)
    expect(leakedReads).toBe(0)
    for (const output of readOutputs.filter((candidate) => candidate.isError))
      expect(output.content).toMatch(/symlink|outside the workspace|not a directory/)

    // What was applied landed inside: the real directory is whichever name holds it when the racer stopped.
    const inside = (await lstat(path.join(workspace, 'swap'))).isDirectory()
      ? path.join(workspace, 'swap')
      : path.join(workspace, 'swap-link')
    const insideNow = await snapshot(inside)
    writeOutcomes.forEach((outcome, index) => {
      if (outcome !== 'applied') return
      if (index < COUNT.creates) expect(insideNow[`new-${index}.txt`]).toBeDefined()
      else if (index < COUNT.creates + COUNT.overwrites)
        expect(insideNow[`over-${index - COUNT.creates}.txt`]).toBe(
          Buffer.from('written\n').toString('base64'),
        )
      else
        expect(insideNow[`edit-${index - COUNT.creates - COUNT.overwrites}.txt`]).toBe(
          Buffer.from('after\n').toString('base64'),
        )
    })
    deleteOutcomes.forEach((outcome, index) => {
      expect(insideNow[`del-${index}.txt`] === undefined).toBe(outcome === 'applied')
    })
  }, 120_000)
})
