// Issue 17 item 1: the workspace tools handed whatever they read to the loop, to MCP clients and into
// stored proposals (a diff's context lines come from the file) with the owner's secrets in it.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRedactor } from '../../core/redact.js'
import { redactToolOutputs } from './redacted-tools.js'
import { createToolRegistry } from './tool-registry.js'
import type { Proposal, ToolContext, ToolOutput } from './types.js'
import { createWorkspaceTools } from './workspace-tools.js'

const SESSION = `hgs_abcdefghijkl_${'Jk8'.repeat(12)}Ww`
const KEY = 'registered-instance-key-material'

describe('redacted-tools', () => {
  let context: ToolContext
  const redactor = createRedactor()
  redactor.add(KEY)
  const tools = createToolRegistry(redactToolOutputs(createWorkspaceTools(), redactor.text))

  beforeEach(async () => {
    context = { workspace: await mkdtemp(path.join(os.tmpdir(), 'hangar-redacted-tools-')) }
    await writeFile(path.join(context.workspace, 'leak.txt'), `a\nsession=${SESSION}\nkey=${KEY}\nz\n`)
  })
  afterEach(async () => {
    await rm(context.workspace, { recursive: true, force: true })
  })

  const expectClean = (text: string) => {
    expect(text).toContain('[redacted]')
    expect(text).not.toContain(SESSION.slice(17))
    expect(text).not.toContain(KEY)
  }

  it('redacts what read tools return', async () => {
    for (const [name, input] of [
      ['read_file', { path: 'leak.txt' }],
      ['grep', { pattern: 'session|key' }],
    ] as const) {
      const tool = tools.get(name)!
      if (tool.kind !== 'read') throw new Error(`${name} is not a read tool`)
      const validated = tools.validateInput(tool, input)
      if (!validated.ok) throw new Error(validated.message)
      expectClean((await tool.run(validated.value, context)).content)
    }
  })

  it("redacts a proposal's diff and an applied command's output, and writes the input as it is", async () => {
    const edit = tools.get('edit_file')!
    if (edit.kind !== 'write') throw new Error('edit_file is not a write tool')
    const input = tools.validateInput(edit, { path: 'leak.txt', old_string: 'z\n', new_string: 'y\n' })
    if (!input.ok) throw new Error(input.message)
    const proposal = (await edit.propose(input.value, context)) as Proposal
    expectClean(proposal.diff ?? '')
    await edit.apply(input.value, context, proposal)
    // The file keeps its content: only what is shown is redacted.
    expect(await readFile(path.join(context.workspace, 'leak.txt'), 'utf8')).toContain(KEY)

    const command = tools.get('run_command')!
    if (command.kind !== 'write') throw new Error('run_command is not a write tool')
    const cat = tools.validateInput(command, { command: 'cat leak.txt' })
    if (!cat.ok) throw new Error(cat.message)
    const proposed = (await command.propose(cat.value, context)) as Proposal
    const output: ToolOutput = await command.apply(cat.value, context, proposed)
    expectClean(output.content)
  })
})
