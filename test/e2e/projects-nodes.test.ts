// Registered projects are allowed roots on every node sharing the store, from the moment one node adds
// them until one removes them: another runtime on the same store (a second daemon on PostgreSQL, a CLI
// process beside the daemon on SQLite) sees the change at its next check, with no restart.
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../src/core/api-types.js'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import { cleanEnv } from '../helpers/hangar-cli.js'
import { type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

describe.each(STORE_ENGINES)(
  'projects as allowed roots across nodes ($name)',
  { timeout: 120_000 },
  (engine) => {
    let daemon: InProcessDaemon
    let other: Runtime
    let folder: string

    beforeAll(async () => {
      daemon = await startInProcessDaemon(engine, 'hangar-projects-nodes-')
      folder = path.join(daemon.root, 'shared-folder')
      await mkdir(folder)
      const otherDir = path.join(daemon.root, 'other-node')
      await mkdir(otherDir)
      other = await createRuntime({
        // PostgreSQL: another daemon with a data dir of its own; SQLite: another process on the same file.
        dataDir: engine.name === 'postgres' ? path.join(daemon.root, 'other-data') : daemon.dataDir,
        databaseUrl: daemon.databaseUrl || undefined,
        config: parseConfig(''),
        projectDir: otherDir,
        nodeId: 'other-node',
        env: cleanEnv({ PATH: '/usr/bin:/bin', HOME: daemon.root }),
        logLevel: 'silent',
      })
    })
    afterAll(async () => {
      await other?.close()
      await daemon?.close()
    })

    it('allows a run in a project added on another node, and refuses it once removed there', async () => {
      const resolve = () => other.workspacePolicy.resolveRunDirectory(folder)
      await expect(resolve()).rejects.toThrow(/is outside the allowed roots/)
      const added = await daemon.api<Project>('POST', '/api/projects', { path: folder })
      expect(added.status).toBe(201)
      expect(await resolve()).toBe(folder)
      expect((await other.projects.containing(folder))?.id).toBe(added.json.id)
      const removed = await fetch(`${daemon.url}/api/projects/${added.json.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${await daemon.tokenFor(daemon.runtime.owner)}` },
      })
      expect(removed.status).toBe(204)
      await expect(resolve()).rejects.toThrow(/is outside the allowed roots/)
    })
  },
)
