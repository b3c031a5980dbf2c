// A bar chart in plain SVG: stacked bars (one colour per series), an axis with a few round ticks (whole
// ones when every value is a count), and a table-like title on each bar for screen readers and hover.
// Small enough to need no chart library.
import { chartScale } from './chart-scale'

export interface BarDatum {
  label: string
  /** Values per series name; a bar stacks them in `series` order. */
  values: Record<string, number>
}

const PALETTE = ['#5b7cfa', '#22a06b', '#e8a33d', '#d6457a', '#8a63d2', '#2fa3b5', '#a0a0aa']

export function seriesColor(index: number): string {
  return PALETTE[index % PALETTE.length]!
}

export function BarChart({
  data,
  series,
  format,
  title,
  height = 220,
}: {
  data: BarDatum[]
  series: string[]
  format: (value: number) => string
  title: string
  height?: number
}) {
  const width = 640
  const padding = { top: 12, right: 8, bottom: 28, left: 64 }
  const plotWidth = width - padding.left - padding.right
  const plotHeight = height - padding.top - padding.bottom
  const totals = data.map((datum) => series.reduce((sum, name) => sum + (datum.values[name] ?? 0), 0))
  const counts = data.every((datum) => Object.values(datum.values).every(Number.isInteger))
  const scale = chartScale(Math.max(0, ...totals), { integer: counts })
  const max = scale.max
  const slot = data.length > 0 ? plotWidth / data.length : plotWidth
  const barWidth = Math.max(2, Math.min(40, slot * 0.7))
  const labelEvery = Math.max(1, Math.ceil(data.length / 8))
  const ticks = scale.ticks

  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={title} preserveAspectRatio="none">
        {ticks.map((tick) => {
          const y = padding.top + plotHeight - (tick / max) * plotHeight
          return (
            <g key={tick}>
              <line x1={padding.left} x2={width - padding.right} y1={y} y2={y} className="chart-grid" />
              <text x={padding.left - 6} y={y + 4} textAnchor="end" className="chart-label">
                {format(tick)}
              </text>
            </g>
          )
        })}
        {data.map((datum, index) => {
          const x = padding.left + index * slot + (slot - barWidth) / 2
          let y = padding.top + plotHeight
          return (
            <g key={datum.label}>
              <title>{`${datum.label}: ${format(totals[index] ?? 0)}`}</title>
              {series.map((name, seriesIndex) => {
                const value = datum.values[name] ?? 0
                const barHeight = (value / max) * plotHeight
                y -= barHeight
                return value > 0 ? (
                  <rect
                    key={name}
                    x={x}
                    y={y}
                    width={barWidth}
                    height={barHeight}
                    fill={seriesColor(seriesIndex)}
                    rx={2}
                  />
                ) : null
              })}
              {index % labelEvery === 0 && (
                <text x={x + barWidth / 2} y={height - 8} textAnchor="middle" className="chart-label">
                  {datum.label}
                </text>
              )}
            </g>
          )
        })}
      </svg>
      {series.length > 1 && (
        <figcaption className="chart-legend">
          {series.map((name, index) => (
            <span key={name}>
              <span className="swatch" style={{ background: seriesColor(index) }} aria-hidden="true" />
              {name}
            </span>
          ))}
        </figcaption>
      )}
    </figure>
  )
}
