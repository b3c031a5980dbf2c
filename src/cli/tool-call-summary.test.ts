// Codex tool calls printed as raw JSON (`file_change({"changes":[{"path":"/abs/hello.txt"…`) while Claude's
// read `Write(hello.txt)`: both now read the same.
import { describe, expect, it } from 'vitest'
import { toolCallSummary, unwrapShell } from './tool-call-summary.js'

describe('toolCallSummary', () => {
  it("names Codex's items as Claude names the same tools", () => {
    const cwd = '/work/repo'
    expect(toolCallSummary('command_execution', { command: "bash -lc 'npm test'" }, cwd)).toBe(
      'Bash(npm test)',
    )
    expect(
      toolCallSummary('file_change', { changes: [{ path: '/work/repo/hello.txt', kind: 'add' }] }, cwd),
    ).toBe('Write(hello.txt)')
    expect(
      toolCallSummary(
        'file_change',
        {
          changes: [
            { path: '/work/repo/a.ts', kind: 'update' },
            { path: '/work/repo/b.ts', kind: 'add' },
          ],
        },
        cwd,
      ),
    ).toBe('Edit(a.ts, b.ts)')
    expect(
      toolCallSummary('file_change', { changes: [{ path: '/work/repo/old.txt', kind: 'delete' }] }, cwd),
    ).toBe('Delete(old.txt)')
    expect(toolCallSummary('web_search', { query: 'vitest retry' })).toBe('WebSearch(vitest retry)')
    expect(toolCallSummary('todo_list', { items: [{}, {}] })).toBe('TodoWrite(2 items)')
  })

  it("keeps Claude's tools as they are, with paths inside the workspace shown relative", () => {
    expect(toolCallSummary('Write', { file_path: '/work/repo/hello.txt', content: 'hi' }, '/work/repo')).toBe(
      'Write(hello.txt)',
    )
    expect(toolCallSummary('Bash', { command: 'ls -la' })).toBe('Bash(ls -la)')
    expect(toolCallSummary('Read', { file_path: '/etc/hosts' }, '/work/repo')).toBe('Read(/etc/hosts)')
  })

  it('falls back to short JSON for a tool it does not know', () => {
    expect(toolCallSummary('files.search', { q: 'x' })).toBe('files.search({"q":"x"})')
  })
})

describe('unwrapShell', () => {
  it('takes the command out of a login-shell wrapper, quotes and all', () => {
    expect(unwrapShell("bash -lc 'echo '\\''hi'\\'''")).toBe("echo 'hi'")
    expect(unwrapShell('/bin/bash -lc "npm run \\"build\\""')).toBe('npm run "build"')
    expect(unwrapShell('ls -la')).toBe('ls -la')
  })
})
