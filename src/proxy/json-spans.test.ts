import { describe, expect, it } from 'vitest'
import {
  applyEdits,
  applyEditsToBytes,
  elementSpan,
  type JsonSpan,
  memberSpan,
  rootSpan,
  valueSpan,
} from './json-spans.js'

const text = (raw: string, span: JsonSpan | undefined) => (span ? raw.slice(span.start, span.end) : undefined)

/** Every element's span, in order, through elementSpan: up to the first index it has no element for. */
function elementSpans(raw: string, arraySpan: JsonSpan): JsonSpan[] {
  const spans: JsonSpan[] = []
  for (let span = elementSpan(raw, arraySpan, 0); span; span = elementSpan(raw, arraySpan, spans.length))
    spans.push(span)
  return spans
}

describe('json-spans', () => {
  it('finds top-level values, not members of the same name nested deeper', () => {
    const raw = `{
      "meta": {"messages": "nested", "list": ["messages", {"messages": 1}]},
      "note": "a \\"messages\\": [] look-alike, with } and ] inside",
      "messages" :  [ {"role": "user"} ]  ,
      "n": -1.5e+3, "t": true, "f": false, "z": null
    }`
    expect(text(raw, valueSpan(raw, 'messages'))).toBe('[ {"role": "user"} ]')
    expect(text(raw, valueSpan(raw, 'n'))).toBe('-1.5e+3')
    expect(text(raw, valueSpan(raw, 'z'))).toBe('null')
    expect(text(raw, valueSpan(raw, 'note'))).toBe('"a \\"messages\\": [] look-alike, with } and ] inside"')
    expect(valueSpan(raw, 'list')).toBeUndefined()
    expect(valueSpan(raw, 'missing')).toBeUndefined()
  })

  it('takes the last of duplicated keys, as JSON.parse does', () => {
    const raw = '{"model":"first","messages":[1],"model":"second","messages":[2,3]}'
    expect(text(raw, valueSpan(raw, 'model'))).toBe('"second"')
    expect(text(raw, valueSpan(raw, 'messages'))).toBe('[2,3]')
    expect(JSON.parse(raw)).toMatchObject({ model: 'second', messages: [2, 3] })
  })

  it('compares keys after unescaping them', () => {
    const raw = '{"mess\\u0061ges":[1],"a\\"b":2,"c\\\\":3,"messages_x":4}'
    expect(text(raw, valueSpan(raw, 'messages'))).toBe('[1]')
    expect(text(raw, valueSpan(raw, 'a"b'))).toBe('2')
    expect(text(raw, valueSpan(raw, 'c\\'))).toBe('3')
    expect(valueSpan(raw, 'messages_')).toBeUndefined()
  })

  it('skips strings that end in escaped backslashes', () => {
    const raw = '{"path":"C:\\\\dir\\\\","quote":"\\\\\\"","after":[1]}'
    expect(JSON.parse(raw)).toEqual({ path: 'C:\\dir\\', quote: '\\"', after: [1] })
    expect(text(raw, valueSpan(raw, 'path'))).toBe('"C:\\\\dir\\\\"')
    expect(text(raw, valueSpan(raw, 'quote'))).toBe('"\\\\\\""')
    expect(text(raw, valueSpan(raw, 'after'))).toBe('[1]')
  })

  it('lists the elements of an array, nested values whole', () => {
    const raw = `{"messages": [
        {"role":"user","content":[{"type":"text","text":"]},{["}]},
        [1, [2, [3]]] ,
        "x,y",12345678901234567890,
        true,null
      ]}`
    const spans = elementSpans(raw, valueSpan(raw, 'messages')!)
    expect(spans.map((span) => raw.slice(span.start, span.end))).toEqual([
      '{"role":"user","content":[{"type":"text","text":"]},{["}]}',
      '[1, [2, [3]]]',
      '"x,y"',
      '12345678901234567890',
      'true',
      'null',
    ])
    expect(elementSpans(raw, { start: 0, end: 0 })).toEqual([])
    expect(elementSpan(raw, valueSpan(raw, 'messages')!, 6)).toBeUndefined()
    expect(elementSpan(raw, valueSpan(raw, 'messages')!, -1)).toBeUndefined()
    const empty = '{"a": [ ]}'
    expect(elementSpans(empty, valueSpan(empty, 'a')!)).toEqual([])
  })

  it('finds members of nested objects', () => {
    const raw = '{"messages":[{"role":"user","content":"hi","content" : {"deep":"x"}}]}'
    const [first] = elementSpans(raw, valueSpan(raw, 'messages')!)
    expect(text(raw, memberSpan(raw, first!, 'role'))).toBe('"user"')
    expect(text(raw, memberSpan(raw, first!, 'content'))).toBe('{"deep":"x"}')
    expect(memberSpan(raw, valueSpan(raw, 'messages')!, 'role')).toBeUndefined()
    const padded = ` \n${raw}\n `
    expect(text(padded, rootSpan(padded))).toBe(raw)
  })

  it('agrees with JSON.parse on every member and element of a generated document', () => {
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const leaf = (): unknown => {
      const pick = Math.floor(random() * 5)
      if (pick === 0) return `s "${Math.floor(random() * 100)}" \\ ] } \u00e9\u{1F680}`
      if (pick === 1) return random() * 1000 - 500
      if (pick === 2) return random() > 0.5
      if (pick === 3) return null
      return []
    }
    const value = (depth: number): unknown => {
      if (depth > 3 || random() < 0.3) return leaf()
      if (random() < 0.5) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1))
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 4) }, (_, index) => [`k${index}"}`, value(depth + 1)]),
      )
    }
    for (let round = 0; round < 50; round++) {
      const document = { list: Array.from({ length: 5 }, () => value(0)), other: value(0) }
      const raw = JSON.stringify(document, null, round % 2 === 0 ? 2 : undefined)
      const listSpan = valueSpan(raw, 'list')!
      expect(JSON.parse(text(raw, valueSpan(raw, 'other'))!)).toEqual(document.other)
      const elements = elementSpans(raw, listSpan).map((span) => JSON.parse(raw.slice(span.start, span.end)))
      expect(elements).toEqual(document.list)
    }
  })

  describe('edits applied to the bytes the text came from', () => {
    const edits = (raw: string) => [
      { start: raw.indexOf('['), end: raw.indexOf('[') + 1, text: '[{"feed":"caf\u00e9 ✓"},' },
      { start: raw.lastIndexOf('}'), end: raw.lastIndexOf('}'), text: ',"added":true' },
    ]

    it('copies every byte between the edits as it came, for ASCII and for multi-byte UTF-8 alike', () => {
      for (const raw of [
        '{"messages": [1, 2], "n": 12345678901234567890}',
        '{"messages": ["é🚀"], "n": "ü"}',
      ]) {
        const bytes = Buffer.from(raw, 'utf8')
        const edited = applyEditsToBytes(bytes.toString('utf8'), bytes, edits(raw))
        expect(edited.toString('utf8')).toBe(applyEdits(raw, edits(raw)))
        expect(edited.toString('utf8')).toContain('✓')
      }
    })

    it('keeps the bytes themselves, not their decoded text, where a byte was not UTF-8', () => {
      const bytes = Buffer.concat([Buffer.from('{"messages": ["a'), Buffer.from([0xff]), Buffer.from('"]}')])
      const raw = bytes.toString('utf8')
      expect(raw).toContain('\ufffd')
      const edited = applyEditsToBytes(raw, bytes, edits(raw))
      expect(edited).toEqual(
        Buffer.concat([
          Buffer.from('{"messages": [{"feed":"café ✓"},"a'),
          Buffer.from([0xff]),
          Buffer.from('"],"added":true}'),
        ]),
      )
    })

    it('returns the very bytes when there is nothing to edit', () => {
      const bytes = Buffer.from('{"a":1}')
      expect(applyEditsToBytes('{"a":1}', bytes, [])).toBe(bytes)
    })
  })
})
