// The SSH targets of hangar.yaml, one connection object each (so their master connection is shared
// by every run on that host), closed when the runtime closes.
import type { HangarConfig } from '../../core/config.js'
import { AppError } from '../../core/errors.js'
import { createSshConnection, type SshConnection } from './ssh-connection.js'

export function createSshTargets(
  config: Pick<HangarConfig, 'targets'>,
  env: Readonly<Record<string, string | undefined>>,
) {
  const connections = new Map<string, SshConnection>()
  return {
    /** The connection for a profile's `target` (undefined for `local` or no target). */
    forProfile(target: string | undefined): SshConnection | undefined {
      if (target === undefined || target === 'local') return undefined
      return this.get(target)
    },
    get(name: string): SshConnection {
      const existing = connections.get(name)
      if (existing) return existing
      const definition = config.targets[name]
      if (!definition)
        throw new AppError('invalid_request', `unknown target "${name}"`, {
          hint: `declare it under targets: in hangar.yaml (known: ${Object.keys(config.targets).join(', ') || 'none'})`,
        })
      const connection = createSshConnection({ name, ...definition }, env)
      connections.set(name, connection)
      return connection
    },
    async close(): Promise<void> {
      await Promise.all([...connections.values()].map((connection) => connection.close()))
      connections.clear()
    },
  }
}

export type SshTargets = ReturnType<typeof createSshTargets>
