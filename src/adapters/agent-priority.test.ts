import { describe, expect, it } from 'vitest'
import { agentNiceness, parseAutogroup, ROOT_GROUP } from './agent-priority.js'

describe('agent priority', () => {
  it('reads a process autogroup, and the root group the kernel prints nothing for', () => {
    expect(parseAutogroup('/autogroup-85 nice 0\n')).toEqual({ name: '/autogroup-85', nice: 0 })
    expect(parseAutogroup('/autogroup-7 nice -3\n')).toEqual({ name: '/autogroup-7', nice: -3 })
    // A daemon started straight by a container's init is in no autogroup: its file is empty. Its agents'
    // groups then get the niceness a group of nice 0 would give them, never "NaN".
    expect(parseAutogroup('')).toEqual(ROOT_GROUP)
    expect(agentNiceness(parseAutogroup('')!.nice)).toBe(10)
    expect(parseAutogroup('something else')).toBeUndefined()
  })

  it('stays within the kernel range', () => {
    expect(agentNiceness(0)).toBe(10)
    expect(agentNiceness(15)).toBe(19)
    // A daemon that runs above normal priority keeps its agents that far below its own.
    expect(agentNiceness(-5)).toBe(5)
  })
})
