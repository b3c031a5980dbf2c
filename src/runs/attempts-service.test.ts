// The attempts service on both engines, with a real runtime, real git worktrees and a fake agent CLI (the
// Cursor Agent stand-in writes the FILE= of its prompt unless its profile is read-only): two attempts run
// side by side, the project's real check command passes in one and fails in the other, a pick removes
// the loser's worktree and branch; bad input and a member without the project make nothing.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../core/config.js'
import type { AttemptGroup, Project } from '../core/api-types.js'
import { AppError } from '../core/errors.js'
import { createRuntime, type Runtime } from '../main.js'
import type { User } from '../store/repositories/users-repository.js'
import { cleanEnv } from '../../test/helpers/hangar-cli.js'
import { freshPostgresUrl, makeTempDir, STORE_ENGINES } from '../../test/helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/bin')

const CONFIG = [
  'agents:',
  '  writer: { adapter: cursor-agent, concurrency: 2 }',
  '  reader: { adapter: cursor-agent, permissions: { mode: strict } }',
  'projects:',
  '  repo: { check: "test -f notes.txt && echo found notes" }',
].join('\n')

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd: dir,
    encoding: 'utf8',
  }).trim()
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; waited < 120_000; waited += 100) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(AppError)
  return error as AppError
}

describe.each(STORE_ENGINES)('attempts service ($name)', (engine) => {
  let root: string
  let repo: string
  let runtime: Runtime
  let project: Project
  let member: User

  beforeAll(async () => {
    root = await makeTempDir('hangar-attempts-')
    repo = path.join(root, 'repo')
    await mkdir(repo)
    git(repo, 'init', '-q', '-b', 'main')
    await writeFile(path.join(repo, 'README.md'), 'hello\n')
    git(repo, 'add', '.')
    git(repo, 'commit', '-q', '-m', 'init')
    git(repo, 'branch', 'older')
    const databaseUrl = engine.name === 'postgres' ? await freshPostgresUrl({ migrated: true }) : undefined
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      databaseUrl,
      config: parseConfig(CONFIG),
      projectDir: repo,
      env: cleanEnv({
        PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
        HOME: root,
      }),
      logLevel: 'silent',
    })
    runtime.scheduler.start(200)
    project = await runtime.projects.add(runtime.owner.id, 'test', { path: repo })
    member = await runtime.store.users.create({ name: 'member', role: 'member' })
  })
  afterAll(async () => {
    await runtime?.scheduler.stop()
    await runtime?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const owner = () => runtime.owner.id

  async function finished(id: string): Promise<AttemptGroup> {
    let group: AttemptGroup | undefined
    await until(async () => (group = await runtime.attempts.get(owner(), id)).finished, 'the attempts')
    return group!
  }

  it('runs attempts side by side with their check results, and a pick removes the others', async () => {
    const started = await runtime.attempts.start(owner(), {
      projectId: project.id,
      prompt: 'FILE=notes.txt',
      agents: ['writer', 'reader'],
    })
    expect(started.id).toMatch(/^atg_/)
    expect(started.attempts.map((attempt) => attempt.agent)).toEqual(['writer', 'reader'])
    const group = await finished(started.id)
    const [writer, reader] = group.attempts
    expect(writer).toMatchObject({
      status: 'succeeded',
      filesChanged: 1,
      additions: 1,
      deletions: 0,
      check: { command: 'test -f notes.txt && echo found notes', status: 'passed', exitCode: 0 },
    })
    expect(writer!.check.output).toContain('found notes')
    expect(writer!.durationMs).toBeGreaterThanOrEqual(0)
    expect(reader).toMatchObject({
      status: 'succeeded',
      filesChanged: 0,
      check: { status: 'failed', exitCode: 1 },
    })
    // Each attempt is a conversation with a worktree of its own, on its own branch.
    const workspaces = await Promise.all(
      group.attempts.map((attempt) => runtime.workspaces.get(owner(), attempt.workspaceId!)),
    )
    expect(new Set(workspaces.map((workspace) => workspace.path)).size).toBe(2)
    expect(existsSync(path.join(workspaces[0]!.path, 'notes.txt'))).toBe(true)
    expect(existsSync(path.join(workspaces[1]!.path, 'notes.txt'))).toBe(false)
    // Each run's log ends with the attempt's event (appended right after the attempt is finished).
    for (const attempt of group.attempts) {
      const events = () => runtime.store.forUser(owner()).runs.listEvents(attempt.runId!, { afterSeq: 0 })
      await until(async () => (await events()).at(-1)?.type === 'attempt-finished', 'attempt-finished')
      expect((await events()).at(-1)).toMatchObject({
        type: 'attempt-finished',
        attemptId: group.id,
        conversationId: attempt.conversationId,
        status: 'succeeded',
        checkExitCode: attempt.check.exitCode,
      })
    }
    expect((await runtime.attempts.list(owner())).map((listed) => listed.id)).toContain(group.id)

    const picked = await runtime.attempts.pick(owner(), group.id, { conversationId: writer!.conversationId })
    expect(picked.group.pickedConversationId).toBe(writer!.conversationId)
    expect(picked.group.attempts[0]).toMatchObject({ picked: true, discardedAt: null })
    expect(picked.group.attempts[1]!.discardedAt).not.toBeNull()
    expect(picked.removed).toHaveLength(1)
    expect(existsSync(workspaces[1]!.path)).toBe(false)
    expect(git(repo, 'branch', '--list', `hangar/${reader!.conversationId}`)).toBe('')
    expect(existsSync(path.join(workspaces[0]!.path, 'notes.txt'))).toBe(true)
    // The first pick stands.
    const again = await rejection(
      runtime.attempts.pick(owner(), group.id, { conversationId: reader!.conversationId }),
    )
    expect(again.code).toBe('conflict')
  })

  it('keeps the others on request, and starts from a base ref', async () => {
    const started = await runtime.attempts.start(owner(), {
      projectId: project.id,
      prompt: 'FILE=notes.txt',
      agents: ['writer', 'writer'],
      baseRef: 'older',
    })
    const group = await finished(started.id)
    expect(group.baseRef).toBe('older')
    expect(group.attempts.map((attempt) => attempt.check.status)).toEqual(['passed', 'passed'])
    const picked = await runtime.attempts.pick(owner(), group.id, {
      conversationId: group.attempts[1]!.conversationId,
      keepOthers: true,
    })
    expect(picked.removed).toEqual([])
    expect((await runtime.workspaces.get(owner(), group.attempts[0]!.workspaceId!)).status).toBe('active')
  })

  it('refuses bad input with a clear error and makes nothing', async () => {
    const scope = runtime.store.forUser(owner())
    const before = {
      conversations: (await scope.conversations.list({ limit: 1000 })).length,
      workspaces: (await scope.workspaces.list()).length,
      groups: (await scope.attempts.list()).length,
      branches: git(repo, 'branch', '--list'),
    }
    const base = { projectId: project.id, prompt: 'FILE=notes.txt' }
    const unknown = await rejection(runtime.attempts.start(owner(), { ...base, agents: ['writer', 'nope'] }))
    expect(unknown.message).toContain('unknown agent "nope"')
    const none = await rejection(runtime.attempts.start(owner(), { ...base, agents: [] }))
    expect(none.message).toBe('agents: name at least one agent')
    const many = await rejection(
      runtime.attempts.start(owner(), { ...base, agents: Array(9).fill('writer') }),
    )
    expect(many.message).toBe('agents: at most 8 agents at once')
    const ref = await rejection(
      runtime.attempts.start(owner(), { ...base, agents: ['writer'], baseRef: 'nope' }),
    )
    expect(ref.message).toContain('has no branch or commit "nope"')
    const option = await rejection(
      runtime.attempts.start(owner(), { ...base, agents: ['writer'], baseRef: '--output=/tmp/x' }),
    )
    expect(option.code).toBe('invalid_request')
    const folder = path.join(root, 'plain')
    await mkdir(folder)
    const plain = await runtime.projects.add(owner(), 'test', { path: folder })
    const notGit = await rejection(
      runtime.attempts.start(owner(), { projectId: plain.id, prompt: 'x', agents: ['writer'] }),
    )
    expect(notGit.message).toContain('is not a git repository')
    await runtime.projects.remove(owner(), 'test', plain.id)
    expect(await rejection(runtime.attempts.get(owner(), 'atg_nope'))).toMatchObject({ code: 'not_found' })
    expect({
      conversations: (await scope.conversations.list({ limit: 1000 })).length,
      workspaces: (await scope.workspaces.list()).length,
      groups: (await scope.attempts.list()).length,
      branches: git(repo, 'branch', '--list'),
    }).toEqual(before)
  })

  it('lets a member without the project neither start, see nor pick attempts', async () => {
    const refused = await rejection(
      runtime.attempts.start(member.id, { projectId: project.id, prompt: 'x', agents: ['writer'] }),
    )
    expect(refused.code).toBe('not_found')
    expect(await runtime.store.forUser(member.id).conversations.list({ limit: 10 })).toEqual([])
    // The owner's attempts are not the member's, even with the project granted.
    const owners = (await runtime.attempts.list(owner()))[0]!
    await runtime.projects.grant(owner(), 'test', project.id, member.id)
    expect((await rejection(runtime.attempts.get(member.id, owners.id))).code).toBe('not_found')
    const conversationId = owners.attempts[0]!.conversationId
    expect((await rejection(runtime.attempts.pick(member.id, owners.id, { conversationId }))).code).toBe(
      'not_found',
    )
    // The member's own attempts hide again once the grant is revoked.
    const mine = await runtime.attempts.start(member.id, {
      projectId: project.id,
      prompt: 'FILE=notes.txt',
      agents: ['writer'],
    })
    await until(async () => (await runtime.attempts.get(member.id, mine.id)).finished, 'the member attempt')
    await runtime.projects.revoke(owner(), 'test', project.id, member.id)
    expect((await rejection(runtime.attempts.get(member.id, mine.id))).code).toBe('not_found')
    expect(await runtime.attempts.list(member.id)).toEqual([])
    const pick = await rejection(
      runtime.attempts.pick(member.id, mine.id, { conversationId: mine.attempts[0]!.conversationId }),
    )
    expect(pick.code).toBe('not_found')
  })
})

describe('attempts service shutdown', () => {
  it('stops a check under way at close, and the next start-up runs it again', async () => {
    const root = await makeTempDir('hangar-attempts-stop-')
    try {
      const repo = path.join(root, 'repo')
      await mkdir(repo)
      git(repo, 'init', '-q')
      git(repo, 'commit', '-q', '--allow-empty', '-m', 'init')
      const go = path.join(root, 'go')
      const check = `test -f ${go} && echo ran || sleep 600`
      const open = () =>
        createRuntime({
          dataDir: path.join(root, 'data'),
          config: parseConfig(
            [
              'agents:',
              '  writer: { adapter: cursor-agent }',
              'projects:',
              `  repo: { check: "${check}" }`,
            ].join('\n'),
          ),
          projectDir: repo,
          env: cleanEnv({
            PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
            HOME: root,
          }),
          logLevel: 'silent',
        })
      const first = await open()
      const project = await first.projects.add(first.owner.id, 'test', { path: repo })
      const started = await first.attempts.start(first.owner.id, {
        projectId: project.id,
        prompt: 'FILE=notes.txt',
        agents: ['writer'],
      })
      await until(
        async () => (await first.attempts.get(first.owner.id, started.id)).attempts[0]!.status === 'checking',
        'the check to start',
      )
      // Closing does not wait ten minutes for the check: it is stopped and put back.
      await first.scheduler.stop()
      await first.close()
      await writeFile(go, '')
      const second = await open()
      try {
        const pending = await second.attempts.get(second.owner.id, started.id)
        expect(pending.attempts[0]!.check.status).toBe('pending')
        await second.attempts.recover()
        await until(async () => (await second.attempts.get(second.owner.id, started.id)).finished, 'recovery')
        expect((await second.attempts.get(second.owner.id, started.id)).attempts[0]!.check).toMatchObject({
          status: 'passed',
          output: 'ran\n',
        })
      } finally {
        await second.close()
      }
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  }, 120_000)
})
