import { describe, expect, it } from 'vitest'
import { hiddenSlot } from './hidden-slot.js'

describe('hidden slot', () => {
  it("keeps a value on the object alone: copies, JSON and the object's keys leave it behind", () => {
    const slot = hiddenSlot<string>('test')
    const object = { a: 1 }
    expect(slot.get(object)).toBeUndefined()
    slot.set(object, 'first')
    expect(slot.get(object)).toBe('first')
    slot.set(object, 'second')
    expect(slot.get(object)).toBe('second')
    expect(Object.keys(object)).toEqual(['a'])
    expect(JSON.stringify(object)).toBe('{"a":1}')
    for (const copy of [{ ...object }, Object.assign({}, object), structuredClone(object)])
      expect(slot.get(copy)).toBeUndefined()
    // Two slots do not share a value.
    expect(hiddenSlot<string>('test').get(object)).toBeUndefined()
  })
})
