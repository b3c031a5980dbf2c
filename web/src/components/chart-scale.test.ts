import { describe, expect, it } from 'vitest'
import { chartScale } from './chart-scale'

describe('chartScale', () => {
  it('gives whole ticks for counts, however small', () => {
    expect(chartScale(1, { integer: true })).toEqual({ max: 1, ticks: [0, 1] })
    expect(chartScale(3, { integer: true })).toEqual({ max: 3, ticks: [0, 1, 2, 3] })
    expect(chartScale(0, { integer: true })).toEqual({ max: 1, ticks: [0, 1] })
    for (const value of [1, 2, 3, 5, 7, 9, 13, 99, 1234, 45_678]) {
      const scale = chartScale(value, { integer: true })
      expect(scale.ticks.every(Number.isInteger), `${value}: ${scale.ticks.join()}`).toBe(true)
      expect(scale.max).toBeGreaterThanOrEqual(value)
      expect(scale.ticks.length).toBeLessThanOrEqual(6)
    }
  })

  it('gives round fractional ticks for amounts', () => {
    expect(chartScale(1, { integer: false })).toEqual({ max: 1, ticks: [0, 0.25, 0.5, 0.75, 1] })
    expect(chartScale(0.03, { integer: false }).ticks).toEqual([0, 0.01, 0.02, 0.03])
    expect(chartScale(1234, { integer: false })).toEqual({ max: 1500, ticks: [0, 500, 1000, 1500] })
  })
})
