/** A run's time on a scheduler: when it was claimed and when it ended. */
export interface TimedRun {
  startedAt: string | null
  endedAt: string | null
}

/** The most runs that overlapped in time (a limit held means this never exceeds it). */
export function maxOverlap(runs: readonly TimedRun[]): number {
  const points = runs.flatMap((run) => [
    { at: Date.parse(run.startedAt!), delta: 1 },
    { at: Date.parse(run.endedAt!), delta: -1 },
  ])
  points.sort((left, right) => left.at - right.at || left.delta - right.delta)
  let current = 0
  let most = 0
  for (const point of points) {
    current += point.delta
    most = Math.max(most, current)
  }
  return most
}
