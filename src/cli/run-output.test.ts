// Codex's tool calls printed as raw JSON in `hangar run` (`file_change({"changes":[…]})`) while Claude's
// read `Write(hello.txt)`. Fed the parser's golden events of real Codex runs, they read like Claude's.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { AgentEvent, EventEnvelope } from '../core/events.js'
import type { CliIo } from './output.js'
import { createRunPrinter } from './run-output.js'

const GOLDENS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/goldens')

async function printed(golden: string, cwd: string): Promise<string> {
  const { events } = JSON.parse(await readFile(path.join(GOLDENS, golden), 'utf8')) as {
    events: AgentEvent[]
  }
  let stderr = ''
  const sink = (write: (text: string) => void) => ({ write: (text: string) => (write(text), true) })
  const io = {
    stdout: sink(() => {}),
    stderr: sink((text) => (stderr += text)),
    env: {},
    cwd,
  } as unknown as CliIo
  const print = createRunPrinter(io, { json: false })
  const start: AgentEvent = { type: 'run-start', agent: 'a', adapter: 'a', cwd, proxied: true }
  ;[start, ...events].forEach((event, seq) =>
    print({ v: 1, runId: 'run_1', seq, ts: '2026-11-26T00:00:00.000Z', ...event } as EventEnvelope),
  )
  return stderr
}

describe('createRunPrinter', () => {
  it("shows a real Codex run's tool calls the way Claude's are shown", async () => {
    const codex = await printed(
      'codex-write.events.json',
      '/root/.cache/hangar/e2e-runs/codex-5TW8y0/workspace-5zr4ej',
    )
    expect(codex).toMatch(/^⏺ Write\(hello\.txt\)$/m)
    expect(codex).not.toMatch(/⏺ file_change\(/)
    const commands = await printed('codex-handmade-write-file.events.json', '/tmp/hangar-rec/codex')
    expect(commands).toMatch(/^⏺ Bash\(ls\)$/m)
    expect(commands).toMatch(/^⏺ Write\(hello\.txt\)$/m)
  })
})
