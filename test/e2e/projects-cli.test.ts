// Issue 20 item 1 on the command line, in this process (runCli), on both engines: `hangar projects
// add|list|remove|grant|revoke` with clear errors, `hangar up` offering its git repository as the first
// project (once: a removal sticks), and `hangar run` saying whether it works in a project.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Project } from '../../src/core/api-types.js'
import { runCli } from '../../src/cli/program.js'
import { cleanEnv } from '../helpers/hangar-cli.js'
import { gitRepo } from '../helpers/in-process-daemon.js'
import { freshPostgresUrl, makeTempDir, STORE_ENGINES } from '../helpers/store-engines.js'

interface Captured {
  code: number
  stdout: string
  stderr: string
}

describe.each(STORE_ENGINES)('hangar projects ($name)', { timeout: 120_000 }, (engine) => {
  let root: string
  /** Where commands run: beside the data dir, not holding it. */
  let work: string
  let repo: string
  let globals: string[]
  let env: NodeJS.ProcessEnv

  beforeEach(async () => {
    root = await makeTempDir('hangar-projects-cli-')
    work = path.join(root, 'work')
    repo = path.join(work, 'repo')
    await mkdir(repo, { recursive: true })
    gitRepo(repo)
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      // What lies above this test's directory is not its project: another test may hold a .git there a moment.
      GIT_CEILING_DIRECTORIES: path.dirname(root),
    })
    globals = ['--data-dir', path.join(root, 'data')]
    if (engine.name === 'postgres') globals.push('--database', await freshPostgresUrl({ migrated: true }))
  })
  afterEach(async () => {
    const { rm } = await import('node:fs/promises')
    await rm(root, { recursive: true, force: true })
  })

  function io(cwd: string) {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const out = { stdout: '', stderr: '' }
    stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()))
    stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()))
    return { io: { stdout, stderr, env, cwd }, out }
  }

  async function hangar(args: string[], cwd = work): Promise<Captured> {
    const { io: cliIo, out } = io(cwd)
    const code = await runCli([...globals, ...args], cliIo)
    return { code, ...out }
  }

  it('adds, lists, grants, revokes and removes projects, with clear errors', async () => {
    const notes = path.join(work, 'notes')
    await mkdir(notes)
    const added = await hangar(['projects', 'add', 'repo', '--agent', 'builtin'])
    expect(added.stderr).toBe('')
    expect(added.stdout).toMatch(/^Added project repo \(.*\/repo, git\) as prj_/)
    expect((await hangar(['projects', 'add', './notes', '--name', 'docs'])).code).toBe(0)

    const table = await hangar(['projects', 'list'])
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+KIND\s+AGENT\s+MEMBERS\s+ID\s+PATH$/)
    expect(table.stdout).toMatch(/repo\s+git\s+builtin/)
    expect(table.stdout).toMatch(/docs\s+folder\s+-/)
    const json = JSON.parse((await hangar(['projects', 'list', '--json'])).stdout) as { projects: Project[] }
    expect(json.projects.map((project) => [project.name, project.kind])).toEqual([
      ['repo', 'git'],
      ['docs', 'folder'],
    ])

    const missing = await hangar(['projects', 'add', 'nowhere'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(
      `hangar: error: project path ${path.join(work, 'nowhere')} does not exist`,
    )
    await writeFile(path.join(work, 'file.txt'), 'x')
    expect((await hangar(['projects', 'add', 'file.txt'])).stderr).toContain('is not a directory')
    expect((await hangar(['projects', 'add', '../data'])).stderr).toContain("is inside Hangar's data dir")
    expect((await hangar(['projects', 'add', 'repo'])).stderr).toContain(
      'is registered already as project repo',
    )
    expect((await hangar(['projects', 'remove', 'nope'])).stderr).toContain(
      'no project nope; one of: repo, docs',
    )

    expect((await hangar(['users', 'add', 'bob'])).code).toBe(0)
    expect((await hangar(['projects', 'grant', 'docs', 'bob'])).stdout).toBe('Granted project docs to bob\n')
    expect((await hangar(['projects', 'list'])).stdout).toMatch(/docs\s+folder\s+-\s+bob/)
    expect((await hangar(['projects', 'grant', 'docs', 'nobody'])).stderr).toContain('no user nobody')
    expect((await hangar(['projects', 'revoke', 'docs', 'bob'])).stdout).toBe(
      'Revoked project docs from bob\n',
    )

    const removed = await hangar(['projects', 'remove', json.projects[1]!.id])
    expect(removed.stdout).toBe(`Removed project docs; its files at ${notes} are untouched\n`)
    expect((await hangar(['projects', 'remove', 'repo'])).code).toBe(0)
    expect((await hangar(['projects', 'list'])).stdout).toBe(
      'No projects yet: add one with hangar projects add PATH\n',
    )
  })

  it('hangar up offers its git repository as the first project, once', async () => {
    async function up(cwd = repo): Promise<string> {
      const { io: cliIo, out } = io(cwd)
      let stop: ((signal: string) => void) | undefined
      const running = runCli([...globals, 'up', '--port', '0'], cliIo, {
        onShutdown: (handler) => (stop = handler),
      })
      const deadline = Date.now() + 60_000
      while (!out.stdout.includes('listening on') || !stop) {
        if (Date.now() > deadline) throw new Error(`hangar up did not start: ${out.stdout}${out.stderr}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      stop!('SIGTERM')
      expect(await running).toBe(0)
      return out.stdout
    }
    // Outside git there is nothing to offer.
    expect(await up(work)).not.toContain('Added project')
    const first = await up()
    expect(first).toContain(`Added project repo (${repo}); \`hangar projects remove repo\` to undo`)
    expect((await hangar(['projects', 'list'])).stdout).toContain(repo)
    // Already there: not offered again.
    expect(await up()).not.toContain('Added project')
    // Removed: the removal sticks.
    expect((await hangar(['projects', 'remove', 'repo'])).code).toBe(0)
    expect(await up()).not.toContain('Added project')
    expect((await hangar(['projects', 'list', '--json'])).stdout).toContain('"projects": []')
  })

  it('hangar run says whether it works in a project or is the owner’s run outside any', async () => {
    const outside = path.join(work, 'scratch')
    await mkdir(outside)
    expect((await hangar(['projects', 'add', 'repo'])).code).toBe(0)
    // No agent can start here (none installed, no key): what matters is the line before it.
    const inProject = await hangar(['run', '--agent', 'builtin', 'hello'], repo)
    expect(inProject.stderr).toContain(`In project repo (${repo})`)
    const runs = JSON.parse((await hangar(['runs', 'list', '--json'])).stdout) as {
      projectId: string | null
    }[]
    const projectId = (
      JSON.parse((await hangar(['projects', 'list', '--json'])).stdout) as { projects: Project[] }
    ).projects[0]!.id
    expect(runs.map((run) => run.projectId)).toEqual([projectId])
    const notInProject = await hangar(['run', '--agent', 'builtin', 'hello'], outside)
    expect(notInProject.stderr).toContain(`Owner run outside any project, in ${outside}`)
    const after = JSON.parse((await hangar(['runs', 'list', '--json'])).stdout) as {
      projectId: string | null
    }[]
    expect(after.map((run) => run.projectId)).toEqual([null, projectId])
  })
})
