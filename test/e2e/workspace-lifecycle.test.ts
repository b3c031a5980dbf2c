// Issue 20 item 5 — a fresh worktree had no `.env`, no dependencies, no port: the agent's first turn went on
// setup, or failed. Real Claude Code on the mock model, through a daemon: a conversation's new workspace
// gets the project's git-ignored `.env`, its setup command runs (output as run events) before Claude's
// first turn, Claude's process has HANGAR_PORT, two live workspaces get distinct ports, a failing setup
// fails the run with its exit code and last lines and a retry runs it again, and removing the workspace
// runs the teardown. A repository's .hangar/workspace.yaml runs only once the owner approved it: a member
// can read it but not approve it.
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuthService } from '../../src/store/auth-service.js'
import { openStore } from '../../src/store/store.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  privateScratchRoot,
  realCliPath,
  startRefusingProxy,
  TEST_API_KEY,
  waitFor,
} from '../helpers/real-cli-cases.js'

interface RunJson {
  id: string
  status: string
  reason: string | null
  cwd: string
  agentPgid: number | null
}

interface Envelope {
  seq: number
  type: string
  [field: string]: unknown
}

interface WorkspaceJson {
  id: string
  conversationId: string | null
  path: string
}

interface LifecycleJson {
  source: string
  config: { setup?: string } | null
  repositoryFile: { contentHash: string; approved: boolean; config: { setup?: string } | null } | null
}

/** A daemon on a fresh git project with `files`, and a member token, with Claude Code on the mock model. */
async function startProject(
  name: string,
  files: Record<string, string>,
  shared: { mock: MockModelServer; refusingUrl: string },
) {
  const root = await privateScratchRoot(name)
  const project = path.join(root, 'project')
  const home = path.join(root, 'home')
  const dataDir = path.join(root, 'data')
  await mkdir(home, { recursive: true })
  await mkdir(project)
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(project, file)), { recursive: true })
    await writeFile(path.join(project, file), text)
  }
  gitIn(project, 'init', '-q', '-b', 'main')
  gitIn(project, 'add', '-A')
  gitIn(project, 'commit', '-qm', 'first')
  const env = cleanEnv({
    PATH: realCliPath(),
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(root, 'claude-config'),
    HANGAR_DATA_DIR: dataDir,
    ANTHROPIC_BASE_URL: shared.mock.url,
    ANTHROPIC_API_KEY: TEST_API_KEY,
    CLAUDE_CODE_MAX_RETRIES: '1',
    ...loopbackOnlyEnv(shared.refusingUrl),
  })
  const daemon = await startDaemon([], { env, cwd: project, timeoutMs: 60_000 })
  const ownerToken = (
    JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }
  ).token
  const store = await openStore({ dataDir })
  let memberToken: string
  try {
    const member = await store.users.create({ name: 'member', role: 'member' })
    memberToken = (await createAuthService({ store }).createToken('system', member.id, { name: 'm' })).token
  } finally {
    await store.close()
  }
  const client = createApiClient(() => ({ url: daemon.url, token: ownerToken }))
  return { root, project, env, daemon, memberToken, ...client }
}

type Project = Awaited<ReturnType<typeof startProject>>

async function eventsOf(daemon: RunningDaemon, token: string, runId: string): Promise<Envelope[]> {
  const stream = await fetch(`${daemon.url}/api/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${token}` },
  })
  return (await stream.text())
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as Envelope)
}

async function conversation(target: Project): Promise<string> {
  const created = await target.api<{ id: string }>('POST', '/api/conversations', { agent: 'claude-code' })
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  return created.json.id
}

async function say(target: Project, conversationId: string, text: string): Promise<RunJson> {
  const sent = await target.api<RunJson>('POST', `/api/conversations/${conversationId}/messages`, { text })
  expect(sent.status, JSON.stringify(sent.json)).toBe(202)
  return sent.json
}

async function workspaceOf(target: Project, conversationId: string): Promise<WorkspaceJson> {
  const { json } = await target.api<WorkspaceJson[]>('GET', '/api/workspaces')
  const found = json.find((workspace) => workspace.conversationId === conversationId)
  if (!found) throw new Error(`no workspace of ${conversationId} in ${JSON.stringify(json)}`)
  return found
}

describe('workspace lifecycle (real Claude Code on the mock model)', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: Project
  let failFlag: string

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    const root = await privateScratchRoot('lifecycle-flags')
    failFlag = path.join(root, 'fail-setup')
    const teardownLog = path.join(root, 'teardown.log')
    shop = await startProject(
      'lifecycle',
      {
        '.gitignore': '.env\n.port\n',
        '.env': 'API_TOKEN=from-the-project\n',
        'README.md': '# shop\n',
        'hangar.yaml': [
          'projects:',
          '  project:',
          '    workspace:',
          '      copy: [".env"]',
          '      ports: 3',
          `      setup: 'echo "setup sees $(cat .env) key=\${ANTHROPIC_API_KEY:-none}"; echo "$HANGAR_PORT" > .port; if [ -e ${failFlag} ]; then echo "npm ERR! missing dependency" >&2; exit 7; fi'`,
          `      teardown: 'echo "$PWD $HANGAR_PORT" >> ${teardownLog}'`,
          '  storefront:',
          '    workspace:',
          '      copy: [".env"]',
        ].join('\n'),
      },
      { mock, refusingUrl: refusing.url },
    )
  }, 120_000)

  afterAll(async () => {
    await shop?.daemon.stop()
    await mock?.close()
    await refusing?.close()
    if (shop) await rm(shop.root, { recursive: true, force: true })
    if (failFlag) await rm(path.dirname(failFlag), { recursive: true, force: true })
  })

  it('copies .env, runs setup before the first turn with HANGAR_PORT, and gives it to Claude', async () => {
    const conversationId = await conversation(shop)
    const submitted = await say(shop, conversationId, 'Please create a file. FILE=agent.txt HANG')
    // The agent's follow-up request hangs at the mock: read Claude's own environment meanwhile.
    const running = await shop.waitForStatus<RunJson>(submitted.id, ['running'], 120_000)
    const workspace = await workspaceOf(shop, conversationId)
    expect(await waitFor(() => existsSync(path.join(workspace.path, 'agent.txt')), 120_000)).toBe(true)
    const withPgid = (await shop.api<RunJson>('GET', `/api/runs/${running.id}`)).json
    expect(withPgid.agentPgid).toBeGreaterThan(0)
    const environ = (await readFile(`/proc/${withPgid.agentPgid}/environ`, 'utf8')).split('\0')
    const port = (await readFile(path.join(workspace.path, '.port'), 'utf8')).trim()
    expect(Number(port)).toBeGreaterThan(1024)
    expect(environ).toContain(`HANGAR_PORT=${port}`)
    expect(environ).toContain('HANGAR_PORT_COUNT=3')
    expect((await shop.api('POST', `/api/runs/${running.id}/cancel`)).status).toBeLessThan(300)
    await shop.waitForStatus(running.id)

    // The git-ignored .env came along; the project's own is untouched.
    expect(await readFile(path.join(workspace.path, '.env'), 'utf8')).toBe('API_TOKEN=from-the-project\n')
    const events = await eventsOf(shop.daemon, await tokenOf(shop), running.id)
    const types = events.map((event) => event.type)
    const start = types.indexOf('workspace-setup-start')
    const end = types.indexOf('workspace-setup-end')
    expect(start).toBeGreaterThanOrEqual(0)
    expect(end).toBeLessThan(types.indexOf('run-start'))
    expect(events[end]).toMatchObject({ status: 'succeeded', exitCode: 0 })
    const output = events
      .filter((event) => event.type === 'workspace-setup-delta')
      .map((event) => event.text)
      .join('')
    // The .env it was given, and none of the daemon's keys.
    expect(output).toContain('setup sees API_TOKEN=from-the-project key=none')

    // The next message does not run setup again.
    const next = await shop.waitForStatus<RunJson>((await say(shop, conversationId, 'NOTOOL hello')).id)
    expect(next.status, next.reason ?? '').toBe('succeeded')
    const again = await eventsOf(shop.daemon, await tokenOf(shop), next.id)
    expect(again.some((event) => event.type === 'workspace-setup-start')).toBe(false)
  })

  it('gives two live workspaces distinct ports', async () => {
    const ports: string[] = []
    for (const _ of [1, 2]) {
      const conversationId = await conversation(shop)
      const run = await shop.waitForStatus<RunJson>((await say(shop, conversationId, 'NOTOOL hi')).id)
      expect(run.status, run.reason ?? '').toBe('succeeded')
      ports.push(
        (await readFile(path.join((await workspaceOf(shop, conversationId)).path, '.port'), 'utf8')).trim(),
      )
    }
    expect(ports[0]).not.toBe(ports[1])
    expect(Math.abs(Number(ports[0]) - Number(ports[1]))).toBeGreaterThanOrEqual(3)
  })

  it('fails the run with the exit code and last lines of a failing setup, and a retry runs it again', async () => {
    await writeFile(failFlag, '')
    const conversationId = await conversation(shop)
    const failed = await shop.waitForStatus<RunJson>((await say(shop, conversationId, 'NOTOOL hi')).id)
    expect(failed.status).toBe('failed')
    expect(failed.reason).toContain('exit code 7')
    expect(failed.reason).toContain('npm ERR! missing dependency')
    const events = await eventsOf(shop.daemon, await tokenOf(shop), failed.id)
    expect(events.find((event) => event.type === 'error')).toMatchObject({
      code: 'workspace_setup_failed',
      retryable: true,
    })
    // The agent never started.
    expect(events.some((event) => event.type === 'run-start')).toBe(false)

    await rm(failFlag)
    const retried = await shop.waitForStatus<RunJson>((await say(shop, conversationId, 'NOTOOL again')).id)
    expect(retried.status, retried.reason ?? '').toBe('succeeded')
    const retryEvents = await eventsOf(shop.daemon, await tokenOf(shop), retried.id)
    expect(retryEvents.find((event) => event.type === 'workspace-setup-end')).toMatchObject({
      status: 'succeeded',
    })
  })

  it('runs the teardown when a workspace is removed', async () => {
    const conversationId = await conversation(shop)
    const run = await shop.waitForStatus<RunJson>((await say(shop, conversationId, 'NOTOOL hi')).id)
    expect(run.status, run.reason ?? '').toBe('succeeded')
    const workspace = await workspaceOf(shop, conversationId)
    const port = (await readFile(path.join(workspace.path, '.port'), 'utf8')).trim()
    const removed = await shop.api<{ teardown?: { target: string; exitCode: number }[] }>(
      'DELETE',
      `/api/workspaces/${workspace.id}`,
    )
    expect(removed.status).toBe(200)
    expect(removed.json.teardown).toEqual([{ target: 'local', exitCode: 0, tail: '' }])
    const log = await readFile(path.join(path.dirname(failFlag), 'teardown.log'), 'utf8')
    expect(log).toContain(`${workspace.path} ${port}\n`)
    expect(existsSync(workspace.path)).toBe(false)
  })

  // Last here: with a second project, conversations must name theirs.
  it("follows a registered project by its name, not its directory's: hangar.yaml's projects.<name>", async () => {
    const second = path.join(shop.root, 'store-app')
    await mkdir(second)
    await writeFile(path.join(second, '.gitignore'), '.env\n')
    await writeFile(path.join(second, '.env'), 'API_TOKEN=from-the-storefront\n')
    await writeFile(path.join(second, 'README.md'), '# storefront\n')
    gitIn(second, 'init', '-q', '-b', 'main')
    gitIn(second, 'add', '-A')
    gitIn(second, 'commit', '-qm', 'first')
    const added = await shop.api<{ id: string }>('POST', '/api/projects', {
      path: second,
      name: 'storefront',
    })
    expect(added.status, JSON.stringify(added.json)).toBe(201)
    const config = await shop.api<LifecycleJson & { project: string }>(
      'GET',
      `/api/workspace-config?projectId=${added.json.id}`,
    )
    expect(config.json).toMatchObject({ project: 'storefront', source: 'hangar.yaml' })
    // Another user's view of a project not granted to them is a 404, as for the project itself.
    const member = await fetch(`${shop.daemon.url}/api/workspace-config?projectId=${added.json.id}`, {
      headers: { authorization: `Bearer ${shop.memberToken}` },
    })
    expect(member.status).toBe(404)

    const created = await shop.api<{ id: string }>('POST', '/api/conversations', {
      agent: 'claude-code',
      projectId: added.json.id,
    })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const run = await shop.waitForStatus<RunJson>((await say(shop, created.json.id, 'NOTOOL hi')).id)
    expect(run.status, run.reason ?? '').toBe('succeeded')
    const workspace = await workspaceOf(shop, created.json.id)
    expect(await readFile(path.join(workspace.path, '.env'), 'utf8')).toBe('API_TOKEN=from-the-storefront\n')
  })
})

async function tokenOf(target: Project): Promise<string> {
  const dataDir = target.env.HANGAR_DATA_DIR!
  return (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token
}

describe("a repository's .hangar/workspace.yaml (approved by the owner only)", () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let repo: Project
  const FILE = "setup: 'echo approved-setup-ran > .setup-ran'\n"

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    repo = await startProject(
      'lifecycle-repo',
      { '.hangar/workspace.yaml': FILE, 'README.md': '# repo\n', '.gitignore': '.setup-ran\n' },
      { mock, refusingUrl: refusing.url },
    )
  }, 120_000)

  afterAll(async () => {
    await repo?.daemon.stop()
    await mock?.close()
    await refusing?.close()
    if (repo) await rm(repo.root, { recursive: true, force: true })
  })

  it('lets a member read the commands but not approve them (REST), and runs nothing unapproved', async () => {
    const seen = await repo.api<LifecycleJson>('GET', '/api/workspace-config', undefined, repo.memberToken)
    expect(seen.status).toBe(200)
    expect(seen.json).toMatchObject({ source: 'none', config: null })
    expect(seen.json.repositoryFile).toMatchObject({
      approved: false,
      config: { setup: 'echo approved-setup-ran > .setup-ran' },
    })
    const hash = seen.json.repositoryFile!.contentHash

    const refused = await repo.api<{ error: { code: string } }>(
      'POST',
      '/api/workspace-config/approve',
      { contentHash: hash },
      repo.memberToken,
    )
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe('forbidden')
    // Nothing changed: still unapproved, for the owner too.
    expect(
      (await repo.api<LifecycleJson>('GET', '/api/workspace-config')).json.repositoryFile?.approved,
    ).toBe(false)

    // Unapproved, it does not run: the run says why, as a warning, and goes on.
    const conversationId = await conversation(repo)
    const run = await repo.waitForStatus<RunJson>((await say(repo, conversationId, 'NOTOOL hi')).id)
    expect(run.status, run.reason ?? '').toBe('succeeded')
    const events = await eventsOf(repo.daemon, await tokenOf(repo), run.id)
    expect(events.find((event) => event.type === 'error')).toMatchObject({
      code: 'workspace_config_unapproved',
    })
    expect(existsSync(path.join((await workspaceOf(repo, conversationId)).path, '.setup-ran'))).toBe(false)
  })

  it('runs once the owner approved it with the CLI, and again needs approval when the file changes', async () => {
    const approved = await runHangar(['workspaces', 'approve', '--json'], {
      env: repo.env,
      cwd: repo.project,
    })
    expect(approved.code, approved.stderr).toBe(0)
    expect(JSON.parse(approved.stdout)).toMatchObject({
      source: 'repository',
      repositoryFile: { approved: true },
    })

    const conversationId = await conversation(repo)
    const run = await repo.waitForStatus<RunJson>((await say(repo, conversationId, 'NOTOOL hi')).id)
    expect(run.status, run.reason ?? '').toBe('succeeded')
    const workspace = await workspaceOf(repo, conversationId)
    expect(await readFile(path.join(workspace.path, '.setup-ran'), 'utf8')).toBe('approved-setup-ran\n')

    await writeFile(path.join(repo.project, '.hangar', 'workspace.yaml'), "setup: 'echo changed'\n")
    const shown = await runHangar(['workspaces', 'config'], { env: repo.env, cwd: repo.project })
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/setup\s+echo changed \(not approved: does not run\)/)
    expect(shown.stdout).toMatch(/approve\s+hangar workspaces approve --hash [0-9a-f]{64} \(owner only\)/)
    // An approval of what was shown before is refused: the file changed since.
    const stale = await repo.api<{ error: { code: string } }>('POST', '/api/workspace-config/approve', {
      contentHash: (
        await repo.api<LifecycleJson>('GET', '/api/workspace-config')
      ).json.repositoryFile!.contentHash.replace(/^./, (char) => (char === '0' ? '1' : '0')),
    })
    expect(stale.status).toBe(409)
  })
})
