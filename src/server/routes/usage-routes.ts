// GET /api/usage?from&to&groupBy=day|agent: tokens and cost over a range, per UTC day (zero-filled, each
// day split by agent, so a chart has a continuous axis) or per agent (costliest first), plus how much of
// each profile's budget is spent (budgets keep their own window, whatever the range).
import type { Hono } from 'hono'
import { z } from 'zod'
import type { UsageGroup, UsageNumbers, UsageReport } from '../../core/api-types.js'
import { AppError } from '../../core/errors.js'
import { allBudgets } from '../../runs/budgets.js'
import { addUsage, type UsageCell, zeroUsage } from '../../store/repositories/usage-repository.js'
import type { RuntimeServices, ServerDeps } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'

const DAY_MS = 86_400_000
/** Zero-filled days in one answer; a longer range can be grouped by agent. */
export const MAX_DAYS = 366
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
/** YYYY-MM-DD, optionally followed by THH:MM[:SS[.fraction]] and Z or ±HH:MM. */
const BOUND = /^(\d{4}-\d{2}-\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/

const querySchema = z.object({
  from: z.string().optional(),
  to: z.string().optional(),
  groupBy: z.enum(['day', 'agent'], { error: 'groupBy must be "day" or "agent"' }).default('day'),
})

/** Whether YYYY-MM-DD names a day of the calendar (Date.parse rolls 2026-02-30 over into March). */
function isCalendarDay(day: string): boolean {
  const time = Date.parse(`${day}T00:00:00.000Z`)
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(day)
}

/** A date (YYYY-MM-DD, UTC) or an ISO-8601 time; a date-only `to` means the end of that day. */
function parseBound(name: 'from' | 'to', value: string): Date {
  const match = BOUND.exec(value)
  // A time without an offset is UTC as well: Date.parse would read it in the daemon's local time zone.
  const iso = !match ? '' : DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : match[2] ? value : `${value}Z`
  const time = Date.parse(iso)
  if (!match || Number.isNaN(time) || !isCalendarDay(match[1]!)) {
    throw new AppError(
      'invalid_request',
      `${name} must be a date (2026-11-01) or an ISO-8601 time, not "${value}"`,
    )
  }
  return new Date(name === 'to' && DATE_ONLY.test(value) ? time + DAY_MS - 1 : time)
}

function startOfUtcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()))
}

function sumOf(cells: readonly UsageCell[]): UsageNumbers {
  const runIds = new Set<string>()
  const total = zeroUsage()
  for (const cell of cells) {
    addUsage(total, cell)
    for (const id of cell.runIds) runIds.add(id)
  }
  return { ...total, runs: runIds.size }
}

const tokensOf = (numbers: UsageNumbers) =>
  numbers.inputTokens + numbers.outputTokens + numbers.cacheReadTokens + numbers.cacheWriteTokens

function groupBy(cells: UsageCell[], key: (cell: UsageCell) => string): Map<string, UsageCell[]> {
  const groups = new Map<string, UsageCell[]>()
  for (const cell of cells) groups.set(key(cell), [...(groups.get(key(cell)) ?? []), cell])
  return groups
}

export function registerUsageRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { store: ServerDeps['store']; runtime: Pick<RuntimeServices, 'config'> },
): void {
  app.get('/api/usage', async (context) => {
    const query = querySchema.safeParse(context.req.query())
    if (!query.success) throw new AppError('invalid_request', query.error.issues[0]?.message ?? 'bad query')
    const to = query.data.to ? parseBound('to', query.data.to) : new Date()
    const from = query.data.from
      ? parseBound('from', query.data.from)
      : new Date(startOfUtcDay(to).getTime() - 29 * DAY_MS)
    if (from > to)
      throw new AppError('invalid_request', `from (${from.toISOString()}) is after to (${to.toISOString()})`)
    const firstDay = startOfUtcDay(from)
    const days = Math.floor((startOfUtcDay(to).getTime() - firstDay.getTime()) / DAY_MS) + 1
    if (query.data.groupBy === 'day' && days > MAX_DAYS) {
      throw new AppError(
        'invalid_request',
        `a range of ${days} days is too long to group by day (at most ${MAX_DAYS})`,
        {
          hint: 'narrow from/to, or use groupBy=agent',
        },
      )
    }

    const userId = context.get('principal').user.id
    const range = { from: from.toISOString(), to: to.toISOString() }
    const [cells, budgets] = await Promise.all([
      deps.store.forUser(userId).usage.cells(range),
      allBudgets({ config: deps.runtime.config, store: deps.store }, userId),
    ])

    let groups: UsageGroup[]
    if (query.data.groupBy === 'day') {
      const byDay = groupBy(cells, (cell) => cell.day)
      groups = Array.from({ length: days }, (_, index) => {
        const key = new Date(firstDay.getTime() + index * DAY_MS).toISOString().slice(0, 10)
        const dayCells = byDay.get(key) ?? []
        const byAgent = Object.fromEntries(
          [...groupBy(dayCells, (cell) => cell.agent)].map(([agent, agentCells]) => {
            const sum = sumOf(agentCells)
            return [agent, { costUsd: sum.costUsd, tokens: tokensOf(sum) }]
          }),
        )
        return { key, ...sumOf(dayCells), byAgent }
      })
    } else {
      groups = [...groupBy(cells, (cell) => cell.agent)]
        .map(([key, agentCells]) => ({ key, ...sumOf(agentCells) }))
        .sort((a, b) => b.costUsd - a.costUsd || tokensOf(b) - tokensOf(a) || a.key.localeCompare(b.key))
    }
    const report: UsageReport = {
      ...range,
      groupBy: query.data.groupBy,
      total: sumOf(cells),
      groups,
      budgets,
    }
    return context.json(report)
  })
}
