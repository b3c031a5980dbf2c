// The value axis of a bar chart: a round top and evenly spaced round ticks. Counts (tokens, runs) get whole
// ticks only — never "0.25 tokens" — and an empty chart still gets an axis of 0 and 1.

const STEPS = [1, 2, 2.5, 5, 10]

export interface ChartScale {
  max: number
  ticks: number[]
}

/** Up to `maxTicks` + 1 ticks from 0 to a round value at or above `value`. */
export function chartScale(value: number, options: { integer: boolean; maxTicks?: number }): ChartScale {
  const maxTicks = options.maxTicks ?? 4
  const top = value > 0 ? value : 1
  const rough = top / maxTicks
  const magnitude = 10 ** Math.floor(Math.log10(rough))
  let step =
    (STEPS.find(
      (candidate) =>
        candidate * magnitude >= rough && (!options.integer || Number.isInteger(candidate * magnitude)),
    ) ?? 10) * magnitude
  if (options.integer) step = Math.max(1, Math.round(step))
  const count = Math.max(1, Math.ceil(top / step - 1e-9))
  const ticks = Array.from({ length: count + 1 }, (_, index) => Number((index * step).toPrecision(12)))
  return { max: ticks.at(-1)!, ticks }
}
