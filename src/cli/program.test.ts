// --help on every command, found by walking the command tree, run in this process: a Node start-up per
// command adds nothing to what is tested (test/e2e/cli.test.ts runs the built binary's --help once), and
// thirty start-ups on two loaded cores took longer than a test may.
import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import type { CliIo } from './output.js'
import { buildProgram, runCli } from './program.js'

function captureIo(): CliIo & { out: () => string; err: () => string } {
  let out = ''
  let err = ''
  return {
    stdout: { write: (text: string) => ((out += text), true) } as unknown as NodeJS.WritableStream,
    stderr: { write: (text: string) => ((err += text), true) } as unknown as NodeJS.WritableStream,
    env: {},
    cwd: '/',
    out: () => out,
    err: () => err,
  }
}

/** Every command path: [], ['runs'], ['runs', 'list'], … */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return [prefix, ...command.commands.flatMap((sub) => commandPaths(sub, [...prefix, sub.name()]))]
}

const paths = commandPaths(buildProgram(captureIo()))

describe('hangar --help', () => {
  it('walks a command tree that has the commands users know', () => {
    const names = paths.map((path) => path.join(' '))
    for (const known of [
      'up',
      'down',
      'status',
      'service install',
      'run',
      'runs list',
      'projects add',
      'backup',
    ])
      expect(names).toContain(known)
  })

  it.each(paths.map((path) => [path.join(' ') || '(top level)', path]))(
    'hangar %s --help prints its usage and exits 0',
    async (_name, path) => {
      const io = captureIo()
      expect(await runCli([...(path as string[]), '--help'], io)).toBe(0)
      expect(io.out()).toContain(
        `Usage: hangar${(path as string[]).length > 0 ? ` ${(path as string[]).join(' ')}` : ''}`,
      )
      expect(io.err()).toBe('')
    },
  )
})
