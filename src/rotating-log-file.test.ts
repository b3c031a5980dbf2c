import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createRedactor } from './core/redact.js'
import { createLogger } from './logger.js'
import { createRotatingLogFile, daemonLogPath } from './rotating-log-file.js'

const write = (stream: NodeJS.WritableStream, text: string) =>
  new Promise<void>((resolve, reject) => stream.write(text, (error) => (error ? reject(error) : resolve())))

describe('rotating log file', () => {
  it('lives in <data-dir>/logs/hangar.log', () => {
    expect(daemonLogPath('/srv/hangar')).toBe('/srv/hangar/logs/hangar.log')
  })

  it('rotates past its size into .1 … .keep and drops the oldest', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-log-'))
    const file = path.join(dir, 'logs', 'hangar.log')
    const log = createRotatingLogFile({ file, maxBytes: 100, keep: 3 })
    // 10 lines of 40 bytes: two lines a file, so 5 files were written and 4 of them are kept.
    for (let index = 0; index < 10; index++) await write(log, `${`line ${index}`.padEnd(39, '.')}\n`)
    await new Promise<void>((resolve) => log.end(resolve))
    expect((await readdir(path.dirname(file))).sort()).toEqual([
      'hangar.log',
      'hangar.log.1',
      'hangar.log.2',
      'hangar.log.3',
    ])
    expect(await readFile(file, 'utf8')).toMatch(/^line 8\.+\nline 9\.+\n$/)
    expect(await readFile(`${file}.1`, 'utf8')).toMatch(/^line 6/)
    expect(await readFile(`${file}.3`, 'utf8')).toMatch(/^line 2/)
    for (const name of await readdir(path.dirname(file)))
      expect((await stat(path.join(dir, 'logs', name))).size).toBeLessThanOrEqual(100)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
  })

  it('appends to the file an earlier daemon left, counting its size', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-log-'))
    const file = path.join(dir, 'hangar.log')
    const first = createRotatingLogFile({ file, maxBytes: 50, keep: 2 })
    await write(first, `${'a'.repeat(39)}\n`)
    await new Promise<void>((resolve) => first.end(resolve))
    const second = createRotatingLogFile({ file, maxBytes: 50, keep: 2 })
    await write(second, `${'b'.repeat(39)}\n`)
    await new Promise<void>((resolve) => second.end(resolve))
    expect(await readFile(`${file}.1`, 'utf8')).toBe(`${'a'.repeat(39)}\n`)
    expect(await readFile(file, 'utf8')).toBe(`${'b'.repeat(39)}\n`)
  })

  it('keeps a line longer than a whole file in one piece', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-log-'))
    const file = path.join(dir, 'hangar.log')
    const log = createRotatingLogFile({ file, maxBytes: 10, keep: 2 })
    await write(log, 'short\n')
    await write(log, `${'x'.repeat(30)}\n`)
    await new Promise<void>((resolve) => log.end(resolve))
    expect(await readFile(file, 'utf8')).toBe(`${'x'.repeat(30)}\n`)
    expect(await readFile(`${file}.1`, 'utf8')).toBe('short\n')
  })

  it('is the logger’s file sink: JSON lines, redacted, rotated', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-log-'))
    const file = path.join(dir, 'hangar.log')
    const destination = createRotatingLogFile({ file, maxBytes: 400, keep: 5 })
    const redactor = createRedactor()
    redactor.add('very-secret-value-123')
    const log = createLogger({ service: 'test', redactor, destination })
    for (let index = 0; index < 20; index++) log.info(`entry ${index} very-secret-value-123`)
    await new Promise((resolve) => setImmediate(resolve))
    const names = await readdir(dir)
    expect(names.length).toBeGreaterThan(1)
    expect(names.length).toBeLessThanOrEqual(6)
    const text = await readFile(file, 'utf8')
    const last = JSON.parse(text.trim().split('\n').at(-1)!) as { msg: string }
    expect(last.msg).toMatch(/^entry 19 /)
    for (const name of names)
      expect(await readFile(path.join(dir, name), 'utf8')).not.toContain('very-secret')
  })
})
