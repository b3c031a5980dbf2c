// How numbers, times and sizes read in the UI.

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 4 })
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 })

export function formatUsd(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—'
  return value > 0 && value < 0.0001 ? '<$0.0001' : usd.format(value)
}

export function formatTokens(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : compact.format(value)
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

export function runDuration(
  run: { startedAt: string | null; endedAt: string | null },
  now = Date.now(),
): string {
  if (!run.startedAt) return '—'
  const end = run.endedAt ? Date.parse(run.endedAt) : now
  return formatDuration(end - Date.parse(run.startedAt))
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })

export function formatWhen(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—'
  const seconds = (Date.parse(iso) - now) / 1000
  const abs = Math.abs(seconds)
  if (abs < 45) return 'just now'
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute')
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), 'hour')
  if (abs < 7 * 86_400) return relative.format(Math.round(seconds / 86_400), 'day')
  return new Date(iso).toLocaleDateString()
}

export function totalTokens(
  usage:
    | {
        inputTokens: number
        outputTokens: number
        cacheReadTokens: number
        cacheWriteTokens: number
      }
    | null
    | undefined,
): number {
  if (!usage) return 0
  return usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
}
