// Whether a run's owner is provably gone as seen from this process: it ran on this node, in another
// boot of Hangar, and its pid is dead (or is ours now). Only then may this process end the run for it —
// never another live owner's (a `hangar run`, another daemon). Other nodes are the lease's business.
import { processAlive } from '../adapters/supervisor.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { RunOwner } from './run-service.js'

export function ownerGone(run: Pick<Run, 'owner'>, self: RunOwner): boolean {
  if (run.owner.node !== self.node) return false
  if (run.owner.bootId === self.bootId) return false
  return run.owner.pid === null || run.owner.pid === self.pid || !processAlive(run.owner.pid)
}
