import { z } from 'zod'
import { describe, expect, it } from 'vitest'
import { createToolRegistry, validateInput } from './tool-registry.js'
import type { ReadTool } from './types.js'
import { createWorkspaceTools } from './workspace-tools.js'

function readTool(name: string): ReadTool<{ path: string }> {
  return {
    kind: 'read',
    name,
    description: `The ${name} tool.`,
    inputSchema: z.object({ path: z.string().describe('A path.') }),
    run: async (input) => ({ content: input.path }),
  }
}

describe('tool-registry', () => {
  const registry = createToolRegistry(createWorkspaceTools())

  it('holds the workspace tools by name, in order', () => {
    expect(registry.list().map((tool) => tool.name)).toEqual([
      'list_files',
      'read_file',
      'glob',
      'grep',
      'write_file',
      'edit_file',
      'delete_file',
      'run_command',
    ])
    expect(registry.get('grep')?.kind).toBe('read')
    expect(registry.get('edit_file')?.kind).toBe('write')
    expect(registry.get('nope')).toBeUndefined()
  })

  it('rejects duplicate and invalid names at creation', () => {
    expect(() => createToolRegistry([readTool('same'), readTool('same')])).toThrow(
      'Duplicate tool name "same"',
    )
    expect(() => createToolRegistry([readTool('has space')])).toThrow('Tool name "has space" is invalid')
    const notAnObject: ReadTool<string> = {
      ...readTool('scalar'),
      inputSchema: z.string(),
      run: async () => ({ content: '' }),
    }
    expect(() => createToolRegistry([notAnObject])).toThrow('must take an object as input')
  })

  it('describes each tool with an object JSON Schema, descriptions on fields, no $schema', () => {
    const tools = registry.toLlmTools()
    for (const tool of tools) {
      expect(tool.inputSchema).toMatchObject({ type: 'object', properties: expect.any(Object) })
      expect(tool.inputSchema).not.toHaveProperty('$schema')
      expect(tool.description.length).toBeGreaterThan(20)
      for (const property of Object.values(
        tool.inputSchema.properties as Record<string, { description?: string }>,
      )) {
        expect(property.description).toEqual(expect.any(String))
      }
    }
    const edit = tools.find((tool) => tool.name === 'edit_file')!
    expect(edit.inputSchema.required).toEqual(['path', 'old_string', 'new_string'])
    expect(edit.inputSchema.properties).toMatchObject({
      path: { type: 'string' },
      old_string: { type: 'string', minLength: 1 },
      replace_all: { type: 'boolean', default: false },
    })
    const read = tools.find((tool) => tool.name === 'read_file')!
    expect(read.inputSchema.required).toEqual(['path'])
    expect(read.inputSchema.properties).toMatchObject({ offset: { type: 'integer', minimum: 1 } })
  })

  it('validates input, filling defaults', () => {
    const grep = registry.get('grep')!
    expect(registry.validateInput(grep, { pattern: 'x' })).toEqual({
      ok: true,
      value: { pattern: 'x', path: '.', case_insensitive: false },
    })
  })

  it('names every wrong field and tells the model to call again', () => {
    const read = registry.get('read_file')!
    expect(validateInput(read, { offset: 0, limit: 'ten' })).toEqual({
      ok: false,
      message: [
        'Invalid input for read_file:',
        '- path: missing; it is required (expected string)',
        '- offset: Too small: expected number to be >=1',
        '- limit: Invalid input: expected number, received string',
        'Call read_file again with the input corrected.',
      ].join('\n'),
    })
  })

  it('explains that the input must be an object', () => {
    const result = validateInput(registry.get('delete_file')!, 'src/a.ts')
    expect(result).toEqual({
      ok: false,
      message:
        'The input of delete_file must be a JSON object with the fields path; call delete_file again with an object.',
    })
  })
})
