// Test-only: reading what `hangar run --json` printed, and finding the processes of a run on this machine.
import { readdir, readFile } from 'node:fs/promises'

export interface RunEnvelope {
  runId: string
  type: string
  [field: string]: unknown
}

/** The JSON envelopes of `hangar run --json` (one per line; any other line is skipped). */
export function parseEnvelopes(stdout: string): RunEnvelope[] {
  return stdout
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as RunEnvelope)
}

/** Every process whose environment holds `marker` (a sandboxed agent and its children: their HOME). */
export async function processesWith(marker: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const environment = await readFile(`/proc/${entry}/environ`, 'utf8').catch(() => '')
    if (environment.includes(marker)) found.push(entry)
  }
  return found
}
