import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createRedactor } from './core/redact.js'
import { createLogger } from './logger.js'

describe('logger', () => {
  it('writes JSON lines with secrets redacted from messages and fields', async () => {
    const destination = new PassThrough()
    let output = ''
    destination.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    const redactor = createRedactor()
    redactor.add('env-provided-secret-value')
    const log = createLogger({ service: 'test', redactor, destination }).child({ component: 'unit' })
    const token = `hgr_abcdefghijkl_${'Z'.repeat(32)}abc123`
    log.info(`request with ${token}`, {
      headers: { authorization: `Bearer ${token}` },
      note: 'value env-provided-secret-value here',
    })
    log.debug('not at info level')
    await new Promise((resolve) => setImmediate(resolve))
    const lines = output.trim().split('\n')
    expect(lines).toHaveLength(1)
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>
    expect(entry).toMatchObject({ service: 'test', component: 'unit', level: 30 })
    expect(output).not.toContain(token)
    expect(output).not.toContain('env-provided-secret-value')
  })
})
