// Removing a workspace whose copy on an SSH target cannot be reached: the local removal still succeeds
// (through the API's path and the start-up sweep of deleted conversations' workspaces), says the host copy
// stayed, and a warning names the target and the workspace. The host is a loopback port nobody listens on.
import { existsSync } from 'node:fs'
import { mkdir, realpath, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { gitIn } from '../../test/helpers/git-fixture.js'
import { makeTempDir, STORE_ENGINES } from '../../test/helpers/store-engines.js'
import type { LogFields, Logger } from '../core/logger.js'
import { createSshTargets } from '../workspaces/ssh/ssh-targets.js'
import { remoteKey } from '../workspaces/ssh/workspace-sync.js'
import { createWorkspaceService } from '../workspaces/workspace-service.js'
import { createHostCopyRemover, recordHostCopy } from './host-copies.js'

/** A loopback port that refuses connections: one the OS handed out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

function recordingLogger(warnings: { message: string; fields: LogFields }[]): Logger {
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (message, fields = {}) => warnings.push({ message, fields }),
    error() {},
    child: () => logger,
  }
  return logger
}

describe.each(STORE_ENGINES)('host copies of a removed workspace ($name)', (engine) => {
  async function withFixture(
    work: (fixture: {
      store: Awaited<ReturnType<typeof engine.open>>['store']
      service: ReturnType<typeof createWorkspaceService>
      ownerId: string
      warnings: { message: string; fields: LogFields }[]
    }) => Promise<void>,
  ): Promise<void> {
    const testStore = await engine.open()
    const scratch = await realpath(await makeTempDir('hangar-host-copies-'))
    const targets = createSshTargets(
      { targets: { box: { ssh: 'nobody@127.0.0.1', dir: '/srv/hangar', port: await closedPort() } } },
      { PATH: process.env.PATH, HANGAR_SSH_COMMAND: 'ssh -F /dev/null' },
    )
    try {
      const project = path.join(scratch, 'project')
      await mkdir(project)
      await writeFile(path.join(project, 'README.md'), '# project\n')
      gitIn(project, 'init', '-q', '-b', 'main')
      gitIn(project, 'add', '.')
      gitIn(project, 'commit', '-q', '-m', 'first')
      const { store } = testStore
      const owner = await store.users.create({ name: 'owner', role: 'owner' })
      const warnings: { message: string; fields: LogFields }[] = []
      const service = createWorkspaceService({
        store,
        dataDir: testStore.dataDir,
        projectDir: project,
        nodeId: 'test-node',
        // As main.ts wires it.
        onRemoved: createHostCopyRemover({
          store,
          targets,
          knownTarget: (name) => name === 'box',
          log: recordingLogger(warnings),
        }),
      })
      await work({ store, service, ownerId: owner.id, warnings })
    } finally {
      await targets.close()
      await testStore.dispose()
      await rm(scratch, { recursive: true, force: true })
    }
  }

  /** A conversation's workspace, shipped to `box` as a run there records it. */
  async function shippedWorkspace(
    store: Awaited<ReturnType<typeof engine.open>>['store'],
    service: ReturnType<typeof createWorkspaceService>,
    ownerId: string,
  ) {
    const conversation = await store
      .forUser(ownerId)
      .conversations.create({ title: 't', profile: 'far', project: 'p' })
    const workspace = await service.forConversation(ownerId, conversation.id)
    await recordHostCopy(store, ownerId, {
      target: 'box',
      key: remoteKey(workspace.cwd),
      remoteRoot: '/srv/hangar',
      localDir: workspace.cwd,
    })
    expect(await store.workspaceHostCopies.of(workspace.id)).toHaveLength(1)
    return { conversationId: conversation.id, workspace }
  }

  it('removes the workspace when its host cannot be reached, says so, and logs a warning naming both', async () => {
    await withFixture(async ({ store, service, ownerId, warnings }) => {
      const { workspace } = await shippedWorkspace(store, service, ownerId)

      const removal = await service.remove(ownerId, workspace.id)

      expect(removal.removedFiles).toBe(true)
      expect(removal.workspace.status).toBe('removed')
      expect(existsSync(workspace.path)).toBe(false)
      expect(removal.hostCopies).toEqual([
        { target: 'box', removed: false, reason: expect.stringContaining('target box') },
      ])
      expect(warnings).toEqual([
        {
          message: 'cannot remove the host copy of a removed workspace',
          fields: expect.objectContaining({ workspaceId: workspace.id, target: 'box' }),
        },
      ])
      // Kept: the copy is still on the host.
      expect(await store.workspaceHostCopies.of(workspace.id)).toHaveLength(1)
    })
  }, 60_000)

  it('sweeps the workspace of a deleted conversation at start-up all the same', async () => {
    await withFixture(async ({ store, service, ownerId, warnings }) => {
      const { conversationId, workspace } = await shippedWorkspace(store, service, ownerId)
      await store.forUser(ownerId).conversations.delete(conversationId)

      expect(await service.cleanupOrphans()).toBe(1)

      expect(existsSync(workspace.path)).toBe(false)
      expect(warnings).toEqual([
        expect.objectContaining({
          fields: expect.objectContaining({ workspaceId: workspace.id, target: 'box' }),
        }),
      ])
    })
  }, 60_000)
})
