import { describe, expect, it } from 'vitest'
import { agentGroupNiceness, agentNiceness, parseAutogroup, ROOT_GROUP } from './agent-priority.js'

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

  it('shares one weight among the running agents: together their groups never outweigh the daemon', () => {
    // The kernel's weights: 1024 at nice 0, 110 at 10, 87 at 11, 70 at 12, 45 at 14, 15 at 19.
    expect(agentGroupNiceness(0, 1)).toBe(10)
    expect(agentGroupNiceness(0, 9)).toBe(10) // 9 × 110 = 990
    expect(agentGroupNiceness(0, 10)).toBe(11) // 10 × 87 = 870
    expect(agentGroupNiceness(0, 12)).toBe(12) // 12 × 87 would be 1044
    expect(agentGroupNiceness(0, 20)).toBe(14) // 20 × 45 = 900
    // Past the nicest level the budget gives way: agents are never stopped for it.
    expect(agentGroupNiceness(0, 100)).toBe(19)
    // A daemon above normal priority has more weight to share; one below it, less.
    expect(agentGroupNiceness(-5, 20)).toBe(9)
    expect(agentGroupNiceness(5, 1)).toBe(15)
    expect(agentGroupNiceness(5, 20)).toBe(19)
    // More agents never make one less nice.
    let previous = 10
    for (let agents = 1; agents <= 60; agents++) {
      expect(agentGroupNiceness(0, agents)).toBeGreaterThanOrEqual(previous)
      previous = agentGroupNiceness(0, agents)
    }
  })
})
