import { describe, expect, it } from 'vitest'
import { bwrapArgs } from './bwrap-args.js'
import { hostAllowed } from './sandbox-network.js'

describe('bwrapArgs', () => {
  it('mounts the root read-only, then hides, then shows again read-only, then binds writable, shallow first', () => {
    const args = bwrapArgs(
      {
        hidden: ['/home/me/.hangar', '/home/me'],
        readOnly: ['/home/me/.npm-global/lib/node_modules'],
        writable: ['/home/me/src/shop', '/home/me/.hangar/runs/r1'],
        readOnlyLast: ['/tmp/hangar-net-x'],
        cwd: '/home/me/src/shop',
      },
      ['node', 'forwarder.mjs', '--', 'claude'],
    )
    const mounts = args
      .join(' ')
      .split(' -- ')[0]!
      .match(/--(?:ro-bind(?:-try)?|tmpfs|bind) \S+/g)
    expect(mounts).toEqual([
      '--ro-bind /',
      '--tmpfs /tmp',
      '--tmpfs /dev/shm',
      '--tmpfs /home/me',
      '--tmpfs /home/me/.hangar',
      '--ro-bind-try /home/me/.npm-global/lib/node_modules',
      '--bind /home/me/src/shop',
      '--bind /home/me/.hangar/runs/r1',
      '--ro-bind /tmp/hangar-net-x',
    ])
    for (const flag of ['--die-with-parent', '--unshare-pid', '--unshare-net', '--new-session'])
      expect(args).toContain(flag)
    expect(args.slice(args.indexOf('--chdir'), args.indexOf('--chdir') + 2)).toEqual([
      '--chdir',
      '/home/me/src/shop',
    ])
    expect(args.slice(-4)).toEqual(['node', 'forwarder.mjs', '--', 'claude'])
  })
})

describe('hostAllowed', () => {
  const allowed = ['registry.npmjs.org', '*.pypi.org', 'mirror.example.com:8443']
  it.each([
    ['registry.npmjs.org', 443, true],
    ['REGISTRY.npmjs.org.', 80, true],
    ['registry.npmjs.org', 22, false],
    ['files.pypi.org', 443, true],
    ['pypi.org', 443, false],
    ['evilpypi.org', 443, false],
    ['mirror.example.com', 8443, true],
    ['mirror.example.com', 443, false],
    ['registry.npmjs.org.evil.com', 443, false],
  ])('%s:%d → %s', (host, port, expected) => {
    expect(hostAllowed(allowed, host, port)).toBe(expected)
  })
})
