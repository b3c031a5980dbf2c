import { describe, expect, it } from 'vitest'
import { describeSandboxStatus, type SandboxStatus } from './sandbox-status.js'

describe('describeSandboxStatus', () => {
  it('says of a profile on an SSH target what its host said, whatever bubblewrap does here', () => {
    const status: SandboxStatus = {
      available: false,
      reason: 'bubblewrap was not found at /usr/bin/bwrap; install it',
      profiles: [
        { name: 'here', sandbox: 'workspace' },
        { name: 'able', sandbox: 'workspace', target: 'box' },
        { name: 'unable', sandbox: 'workspace', target: 'old' },
        { name: 'unknown', sandbox: 'workspace', target: 'far' },
        { name: 'open', sandbox: 'off', target: 'box' },
      ],
      targets: {
        box: { by: 'bubblewrap 0.8.0' },
        old: {
          reason:
            'old (me@old): bubblewrap is not installed there, so runs there are not sandboxed; install it',
        },
        far: { unchecked: 'checking for bubblewrap on target far failed: the connection failed or dropped' },
      },
    }
    expect(describeSandboxStatus(status)).toEqual([
      'sandbox: unavailable — bubblewrap was not found at /usr/bin/bwrap; install it',
      '    here: sandboxed (its runs fail until bubblewrap works)',
      '    able: sandboxed on box (bubblewrap 0.8.0 there)',
      '    unable: not sandboxed: old (me@old): bubblewrap is not installed there, so runs there are not sandboxed; install it',
      '    unknown: sandboxed on far if bubblewrap works there, else its runs go ahead unsandboxed and say why (not checked: checking for bubblewrap on target far failed: the connection failed or dropped)',
      '    open: not sandboxed (sandbox: off)',
    ])
  })
})
