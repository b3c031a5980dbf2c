import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { outputClosed } from './hangar-cli.js'

describe('a stopped daemon whose output a process it started still holds', () => {
  it('fails naming that process instead of waiting for ever', async () => {
    // The shell exits at once; the sleep it left behind keeps its stdout and stderr open.
    const child = spawn('sh', ['-c', 'sleep 300 & echo $!'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    const [pid] = (await once(child.stdout, 'data')) as [Buffer]
    await once(child, 'exit')
    try {
      await expect(outputClosed(child, closed, 500)).rejects.toThrow(
        new RegExp(`stayed open for 0.5 s; held by: .*${pid.toString().trim()} sleep 300`),
      )
    } finally {
      process.kill(Number(pid.toString()), 'SIGKILL')
    }
  })

  it('answers the exit code once the output is closed', async () => {
    const child = spawn('sh', ['-c', 'exit 3'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    await once(child, 'exit')
    expect(await outputClosed(child, closed, 5_000)).toBe(3)
  })
})
