// The request log's COPY line: each field under its own column, in the order the COPY statement names them.
import { describe, expect, it } from 'vitest'
import { COLUMNS, copyRow } from './proxy-requests-appender.js'
import type { ProxyRequestsTable } from './schema.js'

/** A row with a value of its own in every column. */
const row: ProxyRequestsTable = {
  id: 'preq_1',
  user_id: 'usr_1',
  run_id: 'run_1',
  token_id: 'pat_1',
  profile: 'reviewer',
  family: 'anthropic',
  method: 'POST',
  path: '/v1/messages',
  model: 'claude-sonnet-4-5',
  stream: 1,
  status: 200,
  feeds: '[{"source":"ops"}]',
  input_tokens: 11,
  output_tokens: 12,
  cache_read_tokens: 13,
  cache_write_tokens: 14,
  cost_usd: 0.25,
  error: 'went away',
  started_at: '2026-12-05T02:00:00.000Z',
  duration_ms: 15,
}

describe('a request-log row as COPY text', () => {
  it('puts every field under its column, in the order of the COPY statement', () => {
    const line = copyRow(row)
    expect(line.endsWith('\n')).toBe(true)
    const fields = line.slice(0, -1).split('\t')
    expect(Object.fromEntries(COLUMNS.map((column, index) => [column, fields[index]]))).toEqual(
      Object.fromEntries(COLUMNS.map((column) => [column, String(row[column])])),
    )
    expect(fields).toHaveLength(COLUMNS.length)
  })

  it('writes nulls as \\N and escapes what a client sent', () => {
    const fields = copyRow({
      ...row,
      run_id: null,
      model: 'evil\tmodel\nname\\',
      feeds: null,
      cost_usd: null,
      error: null,
    })
      .slice(0, -1)
      .split('\t')
    expect(fields).toHaveLength(COLUMNS.length)
    expect(fields[COLUMNS.indexOf('run_id')]).toBe('\\N')
    expect(fields[COLUMNS.indexOf('model')]).toBe('evil\\tmodel\\nname\\\\')
    expect(fields[COLUMNS.indexOf('cost_usd')]).toBe('\\N')
  })
})
