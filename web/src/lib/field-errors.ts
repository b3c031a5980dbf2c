// Field errors of a 400 `invalid_request`: the daemon names each bad key (`definition.feeds[0].source`,
// `target`, `feeds.0.ttl` from older daemons) in `details.fields`. The form shows each next to the input it
// names, so keys are normalised to the form's own paths (no `definition.` prefix, `[n]` for indices).

export interface FieldError {
  path: string
  message: string
  /** A warning refuses nothing (e.g. feeds with proxy: false); shown apart from the errors. */
  severity?: 'warning'
}

/** `definition.feeds.0.source` / `definition.feeds[0].source` → `feeds[0].source`; `name` stays. */
export function formKeyOf(path: string): string {
  return path
    .replace(/^definition\./, '')
    .replace(/\.(\d+)(?=\.|$)/g, '[$1]')
    .replace(/^definition$/, '(body)')
}

/** The messages of `fields` by form key (several for one key are joined on one line). */
export function fieldErrorsByKey(fields: readonly FieldError[] | undefined): Record<string, string> {
  const byKey: Record<string, string> = {}
  for (const field of fields ?? []) {
    if (field.severity === 'warning') continue
    const key = formKeyOf(field.path)
    byKey[key] = byKey[key] ? `${byKey[key]}; ${field.message}` : field.message
  }
  return byKey
}

/**
 * The errors no input of the form shows (keys the form does not render), so they still reach the user.
 * `shown` are the keys the form has an input for.
 */
export function unplacedErrors(byKey: Record<string, string>, shown: ReadonlySet<string>): string[] {
  return Object.entries(byKey)
    .filter(([key]) => !shown.has(key))
    .map(([key, message]) => (key === '(body)' ? message : `${key}: ${message}`))
}
