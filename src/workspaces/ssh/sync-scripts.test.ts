// The host-side scripts run as a host's shell runs them: here with the local sh.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeTempDir } from '../../../test/helpers/store-engines.js'
import { remoteShell } from './ssh-connection.js'
import { FORGET } from './sync-scripts.js'

describe('FORGET on the host', () => {
  let root: string
  beforeEach(async () => {
    root = await makeTempDir('hangar-forget-')
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  it("removes a workspace, its unfinished copy and its agents' sandbox homes, and nothing of another", async () => {
    for (const directory of [
      'workspaces/k1/src',
      'workspaces/k1.unfinalized',
      'sandbox-homes/k1/0123456789abcdef01234567',
      'workspaces/k2',
      'sandbox-homes/k2/0123456789abcdef01234567',
    ])
      await mkdir(path.join(root, directory), { recursive: true })
    execFileSync('sh', ['-c', remoteShell(FORGET, [root, 'k1'])])
    for (const gone of ['workspaces/k1', 'workspaces/k1.unfinalized', 'sandbox-homes/k1'])
      expect(existsSync(path.join(root, gone)), gone).toBe(false)
    for (const kept of ['workspaces/k2', 'sandbox-homes/k2/0123456789abcdef01234567'])
      expect(existsSync(path.join(root, kept)), kept).toBe(true)
  })
})
