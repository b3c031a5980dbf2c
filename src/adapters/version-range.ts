// A small semver range check for "was this CLI version tested?". It knows the forms adapters declare:
// comparators (`>=1.2.3 <2`), caret and tilde (`^1.2.3`, `~0.61.0`), wildcards (`2026.9.x`) and `||`.
// Versions compare on their numbers only: a pre-release or build suffix (`-fake0001`, `-fc40cd1`) and
// leading zeros (date versions like `2026.09.01`) are tolerated, because CLIs do not all follow semver.

type Triple = [number, number, number]

/** The numbers of a version (`v1.2`, `2026.09.01-abc` …), or null when it has none. */
function parseNumbers(text: string): { numbers: Triple; given: number } | null {
  const match = /^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+].*)?$/.exec(text.trim())
  if (!match) return null
  const parts = [match[1], match[2], match[3]]
  let given = 0
  const numbers = parts.map((part) => {
    if (part === undefined || /^[xX*]$/.test(part)) return 0
    given += 1
    return Number(part)
  }) as Triple
  // A wildcard stops the precision there (`1.x.3` means `1.x`).
  const wildcard = parts.findIndex((part) => part === undefined || /^[xX*]$/.test(part))
  return { numbers, given: wildcard === -1 ? given : Math.min(given, wildcard) }
}

function compare(left: Triple, right: Triple): number {
  for (let index = 0; index < 3; index++) {
    if (left[index]! !== right[index]!) return left[index]! < right[index]! ? -1 : 1
  }
  return 0
}

/** The next version above everything matched by the first `given` numbers (`1.2` → `1.3.0`). */
function bump(numbers: Triple, given: number): Triple {
  if (given <= 0) return [Number.POSITIVE_INFINITY, 0, 0]
  const next = [...numbers] as Triple
  next[given - 1]! += 1
  for (let index = given; index < 3; index++) next[index] = 0
  return next
}

type Bound = { operator: '>=' | '<' | '>' | '<=' | '='; numbers: Triple }

/** One comparator as lower/upper bounds, or null when it is not one this module knows. */
function bounds(token: string): Bound[] | null {
  const match = /^(\^|~|>=|<=|>|<|=)?(.+)$/.exec(token)
  const operator = match?.[1] ?? ''
  const parsed = match?.[2] ? parseNumbers(match[2]) : null
  if (!parsed) return null
  const { numbers, given } = parsed
  switch (operator) {
    case '^': {
      // The first non-zero number may not change (`^0.61.0` stays below 0.62.0).
      const fixed = numbers[0] > 0 || given === 1 ? 1 : numbers[1] > 0 || given === 2 ? 2 : 3
      return [
        { operator: '>=', numbers },
        { operator: '<', numbers: bump(numbers, fixed) },
      ]
    }
    case '~':
      return [
        { operator: '>=', numbers },
        { operator: '<', numbers: bump(numbers, given >= 2 ? 2 : given) },
      ]
    case '':
    case '=':
      return given === 3
        ? [{ operator: '=', numbers }]
        : [
            { operator: '>=', numbers },
            { operator: '<', numbers: bump(numbers, given) },
          ]
    case '>':
      return given === 3 ? [{ operator: '>', numbers }] : [{ operator: '>=', numbers: bump(numbers, given) }]
    case '<=':
      return given === 3 ? [{ operator: '<=', numbers }] : [{ operator: '<', numbers: bump(numbers, given) }]
    default:
      return [{ operator: operator as '>=' | '<', numbers }]
  }
}

function holds(version: Triple, bound: Bound): boolean {
  const order = compare(version, bound.numbers)
  switch (bound.operator) {
    case '>=':
      return order >= 0
    case '>':
      return order > 0
    case '<':
      return order < 0
    case '<=':
      return order <= 0
    default:
      return order === 0
  }
}

/** Whether `range` is one this module understands (adapter definitions are checked by their tests). */
export function isVersionRange(range: string): boolean {
  const sets = range.split('||').map((set) => set.trim().split(/\s+/).filter(Boolean))
  return sets.every((set) => set.length > 0 && set.every((token) => bounds(token) !== null))
}

/** True or false when both parse; null when the version has no numbers or the range is not understood. */
export function versionInRange(version: string, range: string): boolean | null {
  const parsed = parseNumbers(version)
  if (!parsed || parsed.given === 0 || !isVersionRange(range)) return null
  return range
    .split('||')
    .map((set) => set.trim().split(/\s+/).filter(Boolean))
    .some((set) => set.every((token) => bounds(token)!.every((bound) => holds(parsed.numbers, bound))))
}
