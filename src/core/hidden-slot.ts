// A value kept on an object under a symbol of its own, not enumerable: a per-object cache that a copy (a
// spread, Object.assign, structuredClone) and JSON.stringify leave behind, so it belongs to that object
// alone, as an entry of a WeakMap keyed by the object would. For a fraction of the cost: each new key of a
// WeakMap is an ephemeron that every garbage collection traces (the event writer's JSON of each envelope
// took 1.8 µs an event that way, 0.4 µs as a slot).
export interface HiddenSlot<T> {
  get(object: object): T | undefined
  set(object: object, value: T): void
}

export function hiddenSlot<T>(name: string): HiddenSlot<T> {
  const key = Symbol(name)
  return {
    get: (object) => (object as { [key]?: T })[key],
    set(object, value) {
      if (Object.hasOwn(object, key)) (object as { [key]: T })[key] = value
      else Object.defineProperty(object, key, { value, writable: true })
    },
  }
}
