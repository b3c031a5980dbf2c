// Commander printed `error: unknown command 'x'` and Hangar `hangar: error: …`, and hints came in
// parentheses that nested: one prefix, hints after a semicolon.
import { describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import { type CliIo, formatUsageError, printError } from './output.js'

function captureIo(): CliIo & { err: () => string } {
  let err = ''
  return {
    stdout: { write: () => true } as unknown as NodeJS.WritableStream,
    stderr: { write: (text: string) => ((err += text), true) } as unknown as NodeJS.WritableStream,
    env: {},
    cwd: '/',
    err: () => err,
  }
}

describe('formatUsageError', () => {
  it("says Commander's usage errors with Hangar's one prefix and where the usage is", () => {
    expect(formatUsageError("error: unknown command 'nope'\n", 'hangar')).toBe(
      "hangar: error: unknown command 'nope'; see hangar --help",
    )
    expect(formatUsageError("error: unknown command 'lis'\n(Did you mean list?)\n", 'hangar runs')).toBe(
      "hangar: error: unknown command 'lis'; did you mean list? See hangar runs --help",
    )
    expect(
      formatUsageError(
        "error: too many arguments for 'agents'. Expected 0 arguments but got 1.\n",
        'hangar agents',
      ),
    ).toBe(
      "hangar: error: too many arguments for 'agents'. Expected 0 arguments but got 1; see hangar agents --help",
    )
  })
})

describe('printError', () => {
  it('puts the hint after a semicolon, so parentheses in it never nest', () => {
    const io = captureIo()
    printError(
      io,
      new AppError('usage', 'the data dir is inside the project', {
        hint: 'keep it outside (--data-dir or HANGAR_DATA_DIR)',
      }),
    )
    expect(io.err()).toBe(
      'hangar: error: the data dir is inside the project; keep it outside (--data-dir or HANGAR_DATA_DIR)\n',
    )
  })
})
