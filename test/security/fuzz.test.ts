// Issue 17 ("Also"): ≥ 1,000 generated malformed requests at a real daemon's API, MCP endpoint and LLM
// proxy — every answer a 4xx in its error shape (or a JSON-RPC error), the daemon healthy throughout, the
// store unchanged except the request log, nothing forwarded to a model. `npm run fuzz` runs the same
// script with a larger default count and prints its figures.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')

function runFuzz(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/fuzz.mjs'), ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('exit', (code) => resolve({ code, output }))
  })
}

describe('fuzz (npm run fuzz)', () => {
  it('answers 1,000 malformed requests with 4xx errors in their shape and changes nothing', async () => {
    const seed = String(Date.now() % 1_000_000)
    const { code, output } = await runFuzz(['--count', '1000', '--seconds', '150', '--seed', seed])
    expect(output, output).toMatch(/^fuzz seed \d+: 1000 requests/m)
    expect(code, output).toBe(0)
  }, 240_000)
})
