// Review and land against real git repositories, through the one review service (and its REST routes),
// on both store engines: the change set shows committed and uncommitted work; merge, squash and rebase
// put exactly the workspace's tree into the target; every refusal leaves the user's repository as it was
// (git status, HEAD and the index file's bytes compared before and after).
import { readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AppError } from '../../src/core/errors.js'
import type { PreparedWorkspace } from '../../src/workspaces/workspace-service.js'
import type { ReviewCaller } from '../../src/workspaces/review/review-service.js'
import { ENDED_STATUSES } from '../helpers/api-client.js'
import { gitIn } from '../helpers/git-fixture.js'
import { type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

const lines = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${prefix} ${index + 1}`).join('\n') + '\n'

/** What must not change in the user's repository when a land is refused. */
async function snapshot(repo: string) {
  return {
    status: gitIn(repo, 'status', '--porcelain', '--untracked-files=all'),
    head: gitIn(repo, 'rev-parse', 'HEAD'),
    refs: gitIn(
      repo,
      'for-each-ref',
      '--format=%(refname) %(objectname)',
      'refs/heads/main',
      'refs/heads/feature',
    ),
    index: (await readFile(path.join(repo, '.git', 'index'))).toString('base64'),
  }
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(AppError)
  return error as AppError
}

describe.each(STORE_ENGINES)('review and land ($name)', (engine) => {
  let daemon: InProcessDaemon
  let repo: string
  let caller: ReviewCaller
  let workspace: PreparedWorkspace
  let conversationId: string

  beforeEach(async () => {
    daemon = await startInProcessDaemon(engine, 'hangar-review-')
    repo = daemon.daemonDir
    gitIn(repo, 'branch', '-M', 'main')
    await writeFile(path.join(repo, 'a.txt'), lines('a', 10))
    await writeFile(path.join(repo, 'b.txt'), lines('b', 5))
    gitIn(repo, 'add', '-A')
    gitIn(repo, 'commit', '-q', '-m', 'files')
    gitIn(repo, 'branch', 'feature')
    const owner = daemon.runtime.owner
    caller = { userId: owner.id, actor: `user:${owner.id}`, mayLand: true }
    const conversation = await daemon.runtime.store.forUser(owner.id).conversations.create({
      title: 'Tidy the files',
      profile: 'builtin',
      project: 'daemon-dir',
    })
    conversationId = conversation.id
    workspace = await daemon.runtime.workspaces.forConversation(owner.id, conversation.id)
    // The agent's work: one commit, then staged, unstaged and untracked changes.
    await writeFile(path.join(workspace.path, 'a.txt'), lines('a', 10).replace('a 2\n', 'a two\n'))
    gitIn(workspace.path, 'commit', '-q', '-am', 'agent: rename line two')
    await writeFile(path.join(workspace.path, 'b.txt'), lines('b', 6))
    gitIn(workspace.path, 'add', 'b.txt')
    await writeFile(path.join(workspace.path, 'b.txt'), lines('b', 7))
    await writeFile(path.join(workspace.path, 'c.txt'), 'new file\n')
  }, 60_000)

  afterEach(async () => {
    // A review or a conflict run was queued (and the built-in agent, with no provider, fails it): it ends
    // before the store closes under it.
    const runs = await daemon.runtime.store.forUser(caller.userId).runs.list({ limit: 50 })
    for (const run of runs) await daemon.api('GET', `/api/runs/${run.id}`).then(() => waitEnded(run.id))
    await daemon.close()
  })

  async function waitEnded(runId: string): Promise<void> {
    const runs = daemon.runtime.store.forUser(caller.userId).runs
    for (let tries = 0; tries < 600; tries++) {
      const run = await runs.get(runId)
      if (!run || ENDED_STATUSES.includes(run.status)) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`run ${runId} did not end`)
  }

  const review = () => daemon.runtime.review
  /** The tree the workspace lands (its work, committed), as git computes it independently. */
  const workspaceTree = () => {
    gitIn(workspace.path, 'add', '-A')
    return gitIn(workspace.path, 'write-tree')
  }

  it('shows committed and uncommitted work, flagged, with stats, diffs and the commits', async () => {
    const diff = await review().diff(caller, workspace.id)
    expect(diff.base).toBe(workspace.baseRef)
    expect(diff.files.map((file) => [file.path, file.status, file.uncommitted])).toEqual([
      ['a.txt', 'M', false],
      ['b.txt', 'M', true],
      ['c.txt', 'A', true],
    ])
    const a = diff.files[0]!
    expect([a.additions, a.deletions]).toEqual([1, 1])
    expect(a.patch).toContain('-a 2\n+a two')
    expect(diff.files[1]!.additions).toBe(2)
    expect(diff.files[2]!.patch).toContain('+new file')
    expect(diff.commits).toEqual([
      expect.objectContaining({ subject: 'agent: rename line two', author: 'Test' }),
    ])
    expect(diff.uncommitted).toEqual({ files: 2, paths: ['b.txt', 'c.txt'] })
    // The workspace's own index is untouched: b.txt staged as 6 lines, c.txt untracked.
    expect(gitIn(workspace.path, 'status', '--porcelain')).toBe('MM b.txt\n?? c.txt')
    const stat = await review().diff(caller, workspace.id, { stat: true })
    expect(stat.files.every((file) => file.patch === undefined)).toBe(true)
    expect(stat.stats).toEqual({ files: 3, additions: 4, deletions: 1 })
  })

  it('compares with a branch at its merge-base, and refuses hostile or missing refs', async () => {
    await writeFile(path.join(repo, 'd.txt'), 'on main\n')
    gitIn(repo, 'add', 'd.txt')
    gitIn(repo, 'commit', '-q', '-m', 'main moves on')
    const diff = await review().diff(caller, workspace.id, { base: 'main' })
    expect(diff.base).toBe(workspace.baseRef)
    expect(diff.baseBranch).toBe('main')
    expect(diff.files.map((file) => file.path)).not.toContain('d.txt')
    for (const hostile of ['--output=/tmp/x', 'main..feature', 'HEAD@{1}', 'a b', 'main~1'])
      expect((await refusal(review().diff(caller, workspace.id, { base: hostile }))).code).toBe(
        'invalid_request',
      )
    expect((await refusal(review().diff(caller, workspace.id, { base: 'nope' }))).code).toBe('not_found')
  })

  it.each(['merge', 'squash', 'rebase'] as const)(
    '%s lands the exact tree into the checked-out target and updates the checkout',
    async (strategy) => {
      const before = gitIn(repo, 'rev-parse', 'main')
      const tree = workspaceTree()
      gitIn(workspace.path, 'reset', '-q')
      const result = await review().land(caller, workspace.id, { strategy })
      expect(result).toMatchObject({
        into: 'main',
        strategy,
        previous: before,
        updated: 'checkout',
        files: 3,
      })
      expect(gitIn(repo, 'rev-parse', 'main^{tree}')).toBe(tree)
      expect(gitIn(repo, 'rev-parse', 'HEAD')).toBe(result.commit)
      expect(gitIn(repo, 'status', '--porcelain')).toBe('')
      expect(await readFile(path.join(repo, 'c.txt'), 'utf8')).toBe('new file\n')
      const parents = gitIn(repo, 'rev-list', '--parents', '-n', '1', 'main').split(' ').length - 1
      expect(parents).toBe(strategy === 'merge' ? 2 : 1)
      if (strategy === 'squash') expect(gitIn(repo, 'rev-parse', 'main~1')).toBe(before)
      if (strategy === 'rebase') expect(gitIn(repo, 'rev-parse', 'main~2')).toBe(before)
      // The uncommitted work was committed in the workspace by the user, naming no agent (none ran).
      expect(gitIn(workspace.path, 'status', '--porcelain')).toBe('')
      const audit = await daemon.runtime.store.forUser(caller.userId).audit.list({ action: 'workspace.land' })
      expect(audit[0]?.details).toMatchObject({ into: 'main', strategy, commit: result.commit })
    },
    60_000,
  )

  it('lands into a branch that is not checked out by moving only its ref, and can remove the workspace', async () => {
    const runs = daemon.runtime.store.forUser(caller.userId).runs
    const earlier = await runs.create({
      agent: 'codex',
      adapter: 'codex',
      prompt: 'earlier turn',
      cwd: workspace.cwd,
      conversationId,
      status: 'succeeded',
    })
    const before = await snapshot(repo)
    const tree = workspaceTree()
    const result = await review().land(caller, workspace.id, { into: 'feature', removeWorkspace: true })
    expect(result.updated).toBe('ref')
    expect(gitIn(repo, 'rev-parse', 'feature^{tree}')).toBe(tree)
    const after = await snapshot(repo)
    expect({ ...after, refs: '' }).toEqual({ ...before, refs: '' })
    expect(result.removal?.branch).toMatchObject({ name: `hangar/${conversationId}`, deleted: true })
    expect(gitIn(repo, 'branch', '--list', `hangar/${conversationId}`)).toBe('')
    // The agents that ran are named in the commit of the uncommitted work; the event is on the stream.
    expect(gitIn(repo, 'log', '-1', '--format=%B', result.source)).toContain('Agents: codex')
    const events = await runs.listEvents(earlier.id, { afterSeq: 0, limit: 10 })
    expect(events).toEqual([
      expect.objectContaining({
        type: 'workspace-landed',
        into: 'feature',
        commit: result.commit,
        removed: true,
      }),
    ])
  })

  it('refuses a conflict, leaving the repository byte for byte, and offers a run that resolves it', async () => {
    await writeFile(path.join(repo, 'a.txt'), lines('a', 10).replace('a 2\n', 'a deux\n'))
    gitIn(repo, 'commit', '-q', '-am', 'main: line two in French')
    const before = await snapshot(repo)
    const workspaceBefore = {
      head: gitIn(workspace.path, 'rev-parse', 'HEAD'),
      status: gitIn(workspace.path, 'status', '--porcelain'),
    }
    for (const strategy of ['merge', 'squash', 'rebase'] as const) {
      const error = await refusal(review().land(caller, workspace.id, { strategy }))
      expect(error.code).toBe('conflict')
      expect(error.details).toMatchObject({ into: 'main', conflicts: ['a.txt'] })
      expect(error.message).toContain('a.txt')
      expect(await snapshot(repo)).toEqual(before)
    }
    expect(gitIn(repo, 'worktree', 'list').split('\n')).toHaveLength(2)
    // Nor is the workspace changed: its work is not committed by a refused land.
    expect({
      head: gitIn(workspace.path, 'rev-parse', 'HEAD'),
      status: gitIn(workspace.path, 'status', '--porcelain'),
    }).toEqual(workspaceBefore)
    const resolved = await review().resolveConflicts(caller, workspace.id)
    expect(resolved.conflicts).toEqual(['a.txt'])
    expect(resolved.run.prompt).toContain('- a.txt')
    expect(resolved.run.prompt).toContain('main: line two in French')
    expect(resolved.run.conversationId).toBe(conversationId)
    expect(await snapshot(repo)).toEqual(before)
  })

  it('refuses a dirty checkout of the target, a missing branch and a hostile one, untouched', async () => {
    await writeFile(path.join(repo, 'b.txt'), 'edited by the user\n')
    const before = await snapshot(repo)
    const dirty = await refusal(review().land(caller, workspace.id, {}))
    expect(dirty.code).toBe('conflict')
    expect(dirty.message).toContain('uncommitted changes')
    expect(await snapshot(repo)).toEqual(before)
    expect((await refusal(review().land(caller, workspace.id, { into: 'nope' }))).code).toBe('not_found')
    expect((await refusal(review().land(caller, workspace.id, { into: '--force' }))).code).toBe(
      'invalid_request',
    )
    expect(await snapshot(repo)).toEqual(before)
  })

  it('refuses a workspace whose finalize failed and a removed project directory, untouched', async () => {
    const runs = daemon.runtime.store.forUser(caller.userId).runs
    const run = await runs.create({
      agent: 'builtin',
      adapter: 'builtin',
      prompt: 'on the host',
      cwd: workspace.cwd,
      conversationId,
      status: 'failed',
    })
    await runs.update(run.id, { workspaceFinalize: 'failed', finalizeReason: 'ssh: host unreachable' })
    const before = await snapshot(repo)
    const unsynced = await refusal(review().land(caller, workspace.id, {}))
    expect(unsynced.code).toBe('conflict')
    expect(unsynced.message).toContain(
      `hangar runs finalize ${run.id}`.replace('hangar runs finalize ', 'run '),
    )
    expect(unsynced.hint).toContain(`hangar runs finalize ${run.id}`)
    expect(await snapshot(repo)).toEqual(before)
    await runs.update(run.id, { workspaceFinalize: 'ok', finalizeReason: null })

    await rename(repo, `${repo}-moved`)
    try {
      const gone = await refusal(review().land(caller, workspace.id, {}))
      expect(gone.code).toBe('conflict')
      expect(gone.message).toContain('is gone')
    } finally {
      await rename(`${repo}-moved`, repo)
    }
    expect(await snapshot(repo)).toEqual(before)
  })

  it('lets one land of a workspace run at a time (409 for the other), claimed in the store', async () => {
    const scope = daemon.runtime.store.forUser(caller.userId)
    expect(await scope.workspaces.claimLanding(workspace.id, 'another-daemon', 60_000)).toBe(true)
    const before = await snapshot(repo)
    const held = await refusal(review().land(caller, workspace.id, {}))
    expect(held.code).toBe('conflict')
    expect(held.message).toContain('is being landed already')
    expect(await snapshot(repo)).toEqual(before)
    await scope.workspaces.releaseLanding(workspace.id, 'another-daemon')
    const outcomes = await Promise.allSettled([
      review().land(caller, workspace.id, {}),
      review().land(caller, workspace.id, {}),
    ])
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1)
    const rejected = outcomes.find((outcome) => outcome.status === 'rejected')
    expect((rejected?.reason as AppError).code).toBe('conflict')
  })

  it('sends review comments as one structured message and flags them outdated when the lines change', async () => {
    const { run, comments } = await review().review(caller, workspace.id, [
      { path: 'a.txt', startLine: 2, endLine: 3, body: 'Keep the number as a digit.' },
      { path: 'c.txt', startLine: 1, endLine: 1, body: 'Say what this file is for.' },
    ])
    expect(run.conversationId).toBe(conversationId)
    expect(run.prompt).toContain('## 1. a.txt, lines 2-3')
    expect(run.prompt).toContain('a two\na 3')
    expect(run.prompt).toContain('Comment: Keep the number as a digit.')
    expect(run.prompt).toContain('## 2. c.txt, line 1')
    expect(comments.map((comment) => comment.quoted)).toEqual(['a two\na 3', 'new file'])
    expect(comments.every((comment) => comment.runId === run.id && comment.commit.length === 40)).toBe(true)
    let listed = await review().comments(caller, workspace.id)
    expect(listed.map((comment) => comment.outdated)).toEqual([false, false])
    await writeFile(path.join(workspace.path, 'a.txt'), lines('a', 10).replace('a 3\n', 'a three\n'))
    await writeFile(path.join(workspace.path, 'c.txt'), 'new file\nmore\n')
    listed = await review().comments(caller, workspace.id)
    expect(listed.map((comment) => comment.outdated)).toEqual([true, false])
    for (const bad of ['../etc/passwd', '/etc/passwd', 'a.txt/../b.txt', 'missing.txt'])
      expect(
        (
          await refusal(
            review().review(caller, workspace.id, [{ path: bad, startLine: 1, endLine: 1, body: 'x' }]),
          )
        ).code,
      ).toBe('invalid_request')
    expect(
      (
        await refusal(
          review().review(caller, workspace.id, [{ path: 'a.txt', startLine: 9, endLine: 11, body: 'x' }]),
        )
      ).message,
    ).toContain('has 10 line(s)')
  })
})
