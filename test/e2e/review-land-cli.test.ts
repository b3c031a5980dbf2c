// Review and land as a user meets them, through the built daemon's REST API and the built CLI, with the
// fake `cursor-agent` doing the work: a conversation starts from a branch (baseRef), its change set is
// shown (`hangar workspaces diff`), a review comment reaches the agent as one message, `hangar workspaces
// land --squash` puts exactly the workspace's tree on that branch; a conflict and a dirty checkout are
// refused with `hangar: error: …` and leave the repository byte for byte as it was.
import { readFile, realpath, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiClient } from '../helpers/api-client.js'
import { gitIn, initRepo } from '../helpers/git-fixture.js'
import {
  cleanEnv,
  readDaemonToken,
  runHangar,
  type RunningDaemon,
  startDaemon,
} from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

interface RunJson {
  id: string
  status: string
  reason: string | null
  prompt: string
}
interface WorkspaceJson {
  id: string
  conversationId: string | null
  path: string
  baseBranch: string | null
}
interface ErrorJson {
  error: { code: string; message: string }
}

describe('review and land through the daemon and the CLI', { timeout: 180_000 }, () => {
  let root: string
  let dataDir: string
  let project: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let token: string
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))
  const hangar = (args: string[]) =>
    runHangar([...args, '--data-dir', dataDir], { env, cwd: project, timeoutMs: 90_000 })

  async function snapshot() {
    return {
      status: gitIn(project, 'status', '--porcelain', '--untracked-files=all'),
      head: gitIn(project, 'rev-parse', 'HEAD'),
      refs: gitIn(project, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads'),
      index: (await readFile(path.join(project, '.git', 'index'))).toString('base64'),
    }
  }

  async function conversationWithWork(body: Record<string, unknown>, file: string): Promise<WorkspaceJson> {
    const created = await api<{ id: string }>('POST', '/api/conversations', {
      agent: 'cursor-agent',
      ...body,
    })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const sent = await api<RunJson>('POST', `/api/conversations/${created.json.id}/messages`, {
      text: `Please create a file. FILE=${file}`,
    })
    expect(sent.status).toBe(202)
    expect((await waitForStatus<RunJson>(sent.json.id)).status).toBe('succeeded')
    const { json } = await api<WorkspaceJson[]>('GET', '/api/workspaces')
    return json.find((workspace) => workspace.conversationId === created.json.id)!
  }

  beforeAll(async () => {
    root = await realpath(await makeTempDir('hangar-review-cli-'))
    dataDir = path.join(root, 'data')
    project = path.join(root, 'project')
    await initRepo(project)
    gitIn(project, 'branch', 'feature')
    gitIn(project, 'switch', '-q', 'feature')
    await writeFile(path.join(project, 'feature.txt'), 'only on feature\n')
    gitIn(project, 'add', '.')
    gitIn(project, 'commit', '-q', '-m', 'feature work')
    gitIn(project, 'switch', '-q', 'main')
    env = cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    token = await readDaemonToken(dataDir)
  })

  afterAll(async () => {
    await daemon?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('starts from a branch, reviews, sends a comment to the agent and squash-lands onto that branch', async () => {
    for (const [baseRef, status] of [
      ['nope', 404],
      ['--upload-pack=x', 400],
    ] as const) {
      const refused = await api<ErrorJson>('POST', '/api/conversations', { agent: 'cursor-agent', baseRef })
      expect(refused.status).toBe(status)
    }
    const workspace = await conversationWithWork({ baseRef: 'feature' }, 'a.txt')
    expect(workspace.baseBranch).toBe('feature')
    expect(await readFile(path.join(workspace.path, 'feature.txt'), 'utf8')).toBe('only on feature\n')

    const stat = await hangar(['workspaces', 'diff', workspace.id, '--stat'])
    expect(stat.code, stat.stderr).toBe(0)
    expect(stat.stdout).toMatch(/A \* a\.txt {2}\+1 -0/)
    expect(stat.stdout).not.toContain('feature.txt')
    const full = await hangar(['workspaces', 'diff', workspace.id])
    expect(full.stdout).toContain('+hello from mock')

    const review = await api<{ run: RunJson }>('POST', `/api/workspaces/${workspace.id}/review`, {
      comments: [{ path: 'a.txt', startLine: 1, endLine: 1, body: 'Greet the user by name.' }],
    })
    expect(review.status, JSON.stringify(review.json)).toBe(202)
    expect(review.json.run.prompt).toContain(
      '## 1. a.txt, line 1\n```\nhello from mock\n```\nComment: Greet the user by name.',
    )
    expect((await waitForStatus<RunJson>(review.json.run.id)).status).toBe('succeeded')
    const listed = await api<{ comments: { outdated: boolean }[] }>(
      'GET',
      `/api/workspaces/${workspace.id}/review`,
    )
    expect(listed.json.comments).toEqual([expect.objectContaining({ outdated: false })])

    const before = await snapshot()
    gitIn(workspace.path, 'add', '-A')
    const tree = gitIn(workspace.path, 'write-tree')
    gitIn(workspace.path, 'reset', '-q')
    const landed = await hangar(['workspaces', 'land', workspace.id, '--squash', '--message', 'Add a.txt'])
    expect(landed.code, landed.stderr).toBe(0)
    expect(landed.stdout).toContain(`landed workspace ${workspace.id} into feature (squash`)
    expect(gitIn(project, 'rev-parse', 'feature^{tree}')).toBe(tree)
    expect(gitIn(project, 'log', '-1', '--format=%s', 'feature')).toBe('Add a.txt')
    // main stayed checked out and untouched; only the feature ref moved.
    const after = await snapshot()
    expect({ ...after, refs: '' }).toEqual({ ...before, refs: '' })
  })

  it('runs `hangar run --from BRANCH` in a worktree that starts at that branch, and refuses a missing one', async () => {
    const missing = await hangar([
      'run',
      '--agent',
      'cursor-agent',
      '--from',
      'nope',
      'Please create a file. FILE=x.txt',
    ])
    expect(missing.code).toBe(1)
    expect(missing.stderr, missing.stderr).toMatch(
      /^hangar: error: --from: there is no branch, tag or commit nope/m,
    )
    const ran = await hangar([
      'run',
      '--agent',
      'cursor-agent',
      '--from',
      'feature',
      'Please create a file. FILE=x.txt',
    ])
    expect(ran.code, ran.stderr).toBe(0)
    const where = /Working in a worktree at (\S+)/.exec(ran.stderr)?.[1]
    expect(where).toBeTruthy()
    expect(await readFile(path.join(where!, 'feature.txt'), 'utf8')).toBe('only on feature\n')
    expect(await readFile(path.join(where!, 'x.txt'), 'utf8')).toBe('hello from mock\n')
    expect(gitIn(project, 'status', '--porcelain')).toBe('')
  })

  it('refuses a conflict and a dirty checkout with a clear error, leaving the repository as it was', async () => {
    const workspace = await conversationWithWork({}, 'b.txt')
    await writeFile(path.join(workspace.path, 'README.md'), '# from the agent\n')
    await writeFile(path.join(project, 'README.md'), '# from the user\n')
    gitIn(project, 'commit', '-q', '-am', 'user edits the readme')
    const before = await snapshot()
    const conflict = await hangar(['workspaces', 'land', workspace.id])
    expect(conflict.code).toBe(1)
    expect(conflict.stderr).toMatch(
      /^hangar: error: landing workspace \S+ into main conflicts in 1 file\(s\): README\.md; nothing was changed/m,
    )
    expect(conflict.stderr).toContain(`hangar workspaces resolve ${workspace.id}`)
    expect(await snapshot()).toEqual(before)

    await writeFile(path.join(project, 'README.md'), '# dirty\n')
    const dirtyBefore = await snapshot()
    const dirty = await hangar(['workspaces', 'land', workspace.id, '--rebase'])
    expect(dirty.code).toBe(1)
    expect(dirty.stderr).toContain('has uncommitted changes (1 file(s): README.md)')
    expect(await snapshot()).toEqual(dirtyBefore)
    const missing = await hangar(['workspaces', 'land', workspace.id, '--into', 'nope'])
    expect(missing.stderr).toMatch(/^hangar: error: into: there is no branch nope/m)
    expect(await snapshot()).toEqual(dirtyBefore)
  })
})
