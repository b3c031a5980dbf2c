// Issue 17 item 1 (confinement): a data dir inside an allowed root — the project (the default
// ~/.hangar when hangar starts in the home directory), or a root hangar.yaml adds — lets any run read the
// instance key and the CLI's session. Such a configuration is refused when the daemon starts: one line
// naming the data dir and the root, exit code 2, and nothing listening.
import { mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

describe('run boundaries: configuration', () => {
  let root: string
  let project: string
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    root = await realpath(await makeTempDir('hangar-bounds-config-'))
    project = path.join(root, 'project')
    await mkdir(project)
    await mkdir(path.join(root, 'home'))
    gitIn(project, 'init', '-q')
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: path.join(root, 'home'),
    })
  })

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('refuses to start with the data dir inside the project', async () => {
    const dataDir = path.join(project, '.hangar-data')
    const result = await runHangar(['up', '--port', '0', '--data-dir', dataDir], { env, cwd: project })
    expect(result.code, result.stdout).toBe(2)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain(`the data dir ${dataDir} is inside the project ${project}`)
    expect(result.stderr).toMatch(/--data-dir/)
    expect(result.stdout).not.toMatch(/listening on/)
    // Refused before anything was written there.
    expect(existsSync(dataDir)).toBe(false)
  })

  it('refuses the default data dir when hangar starts in the home directory', async () => {
    const home = path.join(root, 'home')
    const result = await runHangar(['up', '--port', '0'], { env, cwd: home })
    expect(result.code, result.stdout).toBe(2)
    expect(result.stderr).toContain(
      `the data dir ${path.join(home, '.hangar')} is inside the project ${home}`,
    )
  })

  it('refuses an allowed root in hangar.yaml that holds the data dir', async () => {
    const dataDir = path.join(root, 'data')
    await writeFile(path.join(project, 'hangar.yaml'), 'server:\n  allowedRoots: [".."]\n')
    try {
      const result = await runHangar(['up', '--port', '0', '--data-dir', dataDir], { env, cwd: project })
      expect(result.code, result.stdout).toBe(2)
      expect(result.stderr).toContain(`the data dir ${dataDir} is inside the allowed root ${root}`)
      expect(result.stderr).toContain('server.allowedRoots')
    } finally {
      await rm(path.join(project, 'hangar.yaml'))
    }
  })

  it('refuses hangar run --cwd outside the project or in the data dir, with exit code 2', async () => {
    const dataDir = path.join(root, 'data-cli')
    const away = path.join(root, 'away')
    await mkdir(away)
    const run = (cwd: string) =>
      runHangar(['run', '--agent', 'builtin', '--cwd', cwd, '--data-dir', dataDir, 'NOTOOL'], {
        env,
        cwd: project,
      })
    const outsideRun = await run('../away')
    expect(outsideRun.code, outsideRun.stderr).toBe(2)
    expect(outsideRun.stderr).toContain(`--cwd: cwd ${away} is outside the allowed roots: ${project}`)
    const inData = await run(dataDir)
    expect(inData.code, inData.stderr).toBe(2)
    expect(inData.stderr).toMatch(/inside Hangar's data dir/)
    const listed = await runHangar(['runs', 'list', '--json', '--data-dir', dataDir], { env, cwd: project })
    expect(JSON.parse(listed.stdout)).toEqual([])
  })

  it('lets the owner run in an allowed root of hangar.yaml, and nowhere else outside the project', async () => {
    const shared = path.join(root, 'shared')
    const elsewhere = path.join(root, 'elsewhere')
    await mkdir(shared)
    await mkdir(elsewhere)
    await writeFile(path.join(project, 'hangar.yaml'), 'server:\n  allowedRoots: ["../shared"]\n')
    const dataDir = path.join(root, 'data-ok')
    const daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    try {
      const { token } = JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as {
        token: string
      }
      const submit = (cwd: string) =>
        fetch(`${daemon.url}/api/runs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ agent: 'builtin', prompt: 'NOTOOL', cwd }),
        })
      const allowed = await submit(shared)
      expect(allowed.status, await allowed.clone().text()).toBe(201)
      expect(((await allowed.json()) as { cwd: string }).cwd).toBe(shared)
      const refused = await submit(elsewhere)
      expect(refused.status).toBe(400)
      const { error } = (await refused.json()) as { error: { message: string } }
      expect(error.message).toContain(
        `cwd ${elsewhere} is outside the allowed roots: ${project}, ${shared}; register it as a project`,
      )
    } finally {
      await daemon.stop()
      await rm(path.join(project, 'hangar.yaml'))
    }
  })
})
