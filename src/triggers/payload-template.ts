// A webhook's payload turned into a prompt, and the filter deciding whether a delivery fires at all.
// Templates are plain dotted-path substitution (`{{issue.title}}`, `{{ issue.labels.0.name }}`): no
// expressions, no helpers, nothing executed. A missing path becomes the empty string; objects become JSON.

export interface TriggerFilter {
  /** The event name (GitHub's `X-GitHub-Event`, or `X-Hangar-Event`). */
  event?: string | undefined
  /** The payload's `action`. */
  action?: string | undefined
  /** The label named by the delivery (`label.name`) — GitHub's `labeled` events. */
  label?: string | undefined
}

const MAX_VALUE_CHARS = 100_000

/** The value at a dotted path (`issue.user.login`, `commits.0.id`), own properties only. */
export function valueAt(payload: unknown, path: string): unknown {
  let current: unknown = payload
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined
    if (!Object.hasOwn(current, key)) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return ''
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text
}

export function renderTemplate(template: string, payload: unknown): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_, path: string) =>
    asText(valueAt(payload, path)),
  )
}

/** Null when the delivery passes the filter, else why it does not (shown in the fire's log). */
export function filterMismatch(
  filter: TriggerFilter | null,
  event: string | undefined,
  payload: unknown,
): string | null {
  if (!filter) return null
  if (filter.event !== undefined && filter.event !== event)
    return `event ${event ?? '(none)'} is not ${filter.event}`
  const action = valueAt(payload, 'action')
  if (filter.action !== undefined && filter.action !== action)
    return `action ${typeof action === 'string' ? action : '(none)'} is not ${filter.action}`
  if (filter.label !== undefined) {
    const label = valueAt(payload, 'label.name')
    if (label !== filter.label)
      return `label ${typeof label === 'string' ? label : '(none)'} is not ${filter.label}`
  }
  return null
}
