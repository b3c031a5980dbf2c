import { describe, expect, it } from 'vitest'
import { loadFactor } from '../helpers/load-factor.js'

describe('load-aware timeouts', () => {
  it('keep the defaults on a machine with cores to spare', () => {
    expect(loadFactor(0.5, 2)).toBe(1)
    expect(loadFactor(2, 2)).toBe(1)
  })

  it('grow with the load per core, up to four times', () => {
    expect(loadFactor(5, 2)).toBe(2.5)
    expect(loadFactor(40, 2)).toBe(4)
  })
})
