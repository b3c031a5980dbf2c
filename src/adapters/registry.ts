// The adapter registry: an ordered list (detection and the default agent follow this order) with a
// boot-time check that no id appears twice.
import { AppError } from '../core/errors.js'
import type { AdapterDef } from './types.js'

export interface AdapterRegistry {
  all(): readonly AdapterDef[]
  get(id: string): AdapterDef | undefined
  require(id: string): AdapterDef
}

export function createAdapterRegistry(definitions: readonly AdapterDef[]): AdapterRegistry {
  const byId = new Map<string, AdapterDef>()
  for (const definition of definitions) {
    if (byId.has(definition.id)) throw new Error(`adapter id "${definition.id}" is registered twice`)
    byId.set(definition.id, definition)
  }
  return {
    all: () => definitions,
    get: (id) => byId.get(id),
    require(id) {
      const definition = byId.get(id)
      if (!definition) {
        throw new AppError('usage', `unknown agent "${id}"`, {
          hint: `use a profile from hangar.yaml or one of: ${[...byId.keys()].join(', ')}`,
        })
      }
      return definition
    },
  }
}
