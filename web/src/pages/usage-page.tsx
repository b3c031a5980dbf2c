// Usage: cost and tokens over time (per day, stacked by agent), per agent, and how close each budgeted
// profile is to its limit — from GET /api/usage.
import { useMemo, useState } from 'react'
import { BarChart, type BarDatum } from '../components/bar-chart'
import { describeCostSummary } from '../../../src/core/usage-cost'
import { formatTokens, formatUsd } from '../lib/format'
import type { UsageResponse } from '../lib/types'
import { useResource } from '../lib/use-resource'

const RANGES = [
  { days: 7, label: '7 days' },
  { days: 30, label: '30 days' },
  { days: 90, label: '90 days' },
]

function startOfDayUtc(daysAgo: number): string {
  const date = new Date()
  date.setUTCHours(0, 0, 0, 0)
  date.setUTCDate(date.getUTCDate() - daysAgo)
  return date.toISOString()
}

const tokensOf = (group: {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
}) => group.inputTokens + group.outputTokens + group.cacheReadTokens + group.cacheWriteTokens

const CHARTS = [
  { measure: 'costUsd', heading: 'Cost per day', title: 'Cost per day, by agent', format: formatUsd },
  { measure: 'tokens', heading: 'Tokens per day', title: 'Tokens per day, by agent', format: formatTokens },
] as const

export function UsagePage() {
  const [days, setDays] = useState(30)
  const from = useMemo(() => startOfDayUtc(days - 1), [days])
  const perDay = useResource<UsageResponse>(`/api/usage?groupBy=day&from=${encodeURIComponent(from)}`)
  const perAgent = useResource<UsageResponse>(`/api/usage?groupBy=agent&from=${encodeURIComponent(from)}`)

  const agents = useMemo(() => (perAgent.data?.groups ?? []).map((group) => group.key), [perAgent.data])
  const byDay = (measure: 'costUsd' | 'tokens'): BarDatum[] =>
    (perDay.data?.groups ?? []).map((group) => ({
      label: group.key.slice(5),
      values: Object.fromEntries(
        Object.entries(group.byAgent ?? {}).map(([agent, value]) => [agent, value[measure]]),
      ),
    }))
  const total = perDay.data?.total
  const budgets = perDay.data?.budgets ?? []

  return (
    <div className="page">
      <header className="page-head">
        <h1>Usage</h1>
        <span className="grow" />
        <div className="segmented" role="group" aria-label="Range">
          {RANGES.map((range) => (
            <button
              key={range.days}
              type="button"
              className={range.days === days ? 'button primary' : 'button'}
              aria-pressed={range.days === days}
              onClick={() => setDays(range.days)}
            >
              {range.label}
            </button>
          ))}
        </div>
      </header>
      {total && (
        <div className="stats">
          <div className="stat">
            <span className="stat-value">{describeCostSummary(total, formatUsd)}</span>
            <span className="muted small">cost</span>
          </div>
          <div className="stat">
            <span className="stat-value">{formatTokens(tokensOf(total))}</span>
            <span className="muted small">tokens</span>
          </div>
          <div className="stat">
            <span className="stat-value">{total.runs}</span>
            <span className="muted small">runs</span>
          </div>
          <div className="stat">
            <span className="stat-value">{total.requests}</span>
            <span className="muted small">model requests</span>
          </div>
        </div>
      )}
      {CHARTS.map((chart) => (
        <section key={chart.measure} className="card">
          <h2>{chart.heading}</h2>
          <BarChart data={byDay(chart.measure)} series={agents} format={chart.format} title={chart.title} />
        </section>
      ))}
      <section className="card">
        <h2>Per agent</h2>
        {perAgent.data && perAgent.data.groups.length === 0 && (
          <p className="empty">No usage in this range.</p>
        )}
        <div className="table-wrap" hidden={perAgent.data?.groups.length === 0}>
          <table className="table" aria-label="Usage per agent">
            <thead>
              <tr>
                <th>Agent</th>
                <th>Cost</th>
                <th>Input</th>
                <th>Output</th>
                <th>Cache read</th>
                <th>Cache write</th>
                <th>Runs</th>
              </tr>
            </thead>
            <tbody>
              {(perAgent.data?.groups ?? []).map((group) => (
                <tr key={group.key}>
                  <td>{group.key}</td>
                  <td>{describeCostSummary(group, formatUsd)}</td>
                  <td>{formatTokens(group.inputTokens)}</td>
                  <td>{formatTokens(group.outputTokens)}</td>
                  <td>{formatTokens(group.cacheReadTokens)}</td>
                  <td>{formatTokens(group.cacheWriteTokens)}</td>
                  <td>{group.runs}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section className="card">
        <h2>Budgets</h2>
        {budgets.length === 0 && (
          <p className="muted">
            No profile has a budget. Add <code>budget: {'{ usd: 5, window: 1d }'}</code> to one.
          </p>
        )}
        {budgets.map((budget) => {
          const percent = Math.min(100, Math.round(budget.fraction * 100))
          const tone = budget.fraction >= 1 ? 'bad' : budget.fraction >= 0.8 ? 'warn' : 'good'
          return (
            <div key={budget.profile} className="budget">
              <div className="row">
                <strong>{budget.profile}</strong>
                <span className="grow" />
                <span className="small">
                  {formatUsd(budget.spentUsd)} of {formatUsd(budget.usd)} in the last {budget.window}
                </span>
              </div>
              <div
                className={`meter meter-${tone}`}
                role="meter"
                aria-valuemin={0}
                aria-valuemax={100}
                aria-valuenow={percent}
                aria-label={`${budget.profile} budget used`}
              >
                <span style={{ width: `${percent}%` }} />
              </div>
            </div>
          )
        })}
      </section>
    </div>
  )
}
