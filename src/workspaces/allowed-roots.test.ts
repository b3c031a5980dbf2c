// Issue 17 item 1: a run's directory is decided on its real path — `..`, absolute paths and symlinks
// out of the allowed roots are refused, so is the data dir — and a data dir inside a root is a config error.
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import { loadAllowedRoots } from './allowed-roots.js'

describe('allowed-roots', () => {
  let root: string
  let project: string
  let dataDir: string

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-roots-')))
    project = path.join(root, 'project')
    dataDir = path.join(root, 'data')
    await mkdir(path.join(project, 'src'), { recursive: true })
    await mkdir(path.join(root, 'shared'))
    await mkdir(path.join(root, 'other'))
    await mkdir(dataDir)
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  async function refusal(promise: Promise<unknown>): Promise<AppError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(AppError)
    return error as AppError
  }

  it('resolves a directory inside the project or a configured root to its real path', async () => {
    await symlink(path.join(project, 'src'), path.join(project, 'inner-link'))
    const roots = await loadAllowedRoots({ projectDir: project, configured: ['../shared'], dataDir })
    expect(roots.roots).toEqual([project, path.join(root, 'shared')])
    expect(await roots.resolve(undefined)).toBe(project)
    expect(await roots.resolve('src')).toBe(path.join(project, 'src'))
    expect(await roots.resolve('inner-link')).toBe(path.join(project, 'src'))
    expect(await roots.resolve(path.join(root, 'shared'))).toBe(path.join(root, 'shared'))
    expect(await roots.resolve('.', path.join(project, 'src'))).toBe(path.join(project, 'src'))
  })

  it('refuses .., absolute paths and symlinks out of the roots, the data dir, and missing paths', async () => {
    await symlink(path.join(root, 'other'), path.join(project, 'out-link'))
    await symlink(dataDir, path.join(project, 'data-link'))
    await writeFile(path.join(project, 'file.txt'), 'x')
    const roots = await loadAllowedRoots({ projectDir: project, configured: [], dataDir })
    for (const requested of ['..', '../other', '../../..', path.join(root, 'other'), 'out-link', '/']) {
      const error = await refusal(roots.resolve(requested))
      expect(error.code, requested).toBe('invalid_request')
      expect(error.message, requested).toMatch(/outside the allowed roots: /)
      expect(error.hint, requested).toContain('server.allowedRoots')
    }
    for (const requested of [dataDir, 'data-link', path.join(dataDir, '.')]) {
      expect((await refusal(roots.resolve(requested))).message, requested).toMatch(/inside Hangar's data dir/)
    }
    expect((await refusal(roots.resolve('missing'))).message).toMatch(/does not exist/)
    expect((await refusal(roots.resolve('file.txt'))).message).toMatch(/is not a directory/)
  })

  it('refuses a data dir inside a root, a root inside the data dir, and a root that does not exist', async () => {
    const inProject = await refusal(
      loadAllowedRoots({ projectDir: project, configured: [], dataDir: path.join(project, '.hangar') }),
    )
    expect(inProject.code).toBe('config_invalid')
    expect(inProject.message).toBe(
      `the data dir ${path.join(project, '.hangar')} is inside the project ${project}: runs there could read its keys and sessions`,
    )
    const inRoot = await refusal(loadAllowedRoots({ projectDir: project, configured: [root], dataDir }))
    expect(inRoot.message).toContain(`is inside the allowed root ${root}`)
    await mkdir(path.join(dataDir, 'workspaces'))
    const around = await refusal(
      loadAllowedRoots({ projectDir: project, configured: [path.join(dataDir, 'workspaces')], dataDir }),
    )
    expect(around.message).toContain('inside the data dir')
    const missing = await refusal(loadAllowedRoots({ projectDir: project, configured: ['../nope'], dataDir }))
    expect(missing.code).toBe('config_invalid')
    expect(missing.message).toBe(`server.allowedRoots: ${path.join(root, 'nope')} is not a directory`)
    const home = await refusal(
      loadAllowedRoots({ projectDir: project, configured: ['~'], dataDir, home: root }),
    )
    expect(home.message).toContain(`is inside the allowed root ${root}`)
  })

  it('asks for the registered projects at every check, and names each root once', async () => {
    let projects: string[] = []
    const roots = await loadAllowedRoots({
      projectDir: project,
      configured: [],
      dataDir,
      projectRoots: async () => projects,
    })
    const other = path.join(root, 'other')
    expect((await refusal(roots.resolve(other))).message).toBe(
      `cwd ${other} is outside the allowed roots: ${project}`,
    )
    projects = [project, other]
    expect(await roots.resolve(other)).toBe(other)
    projects = [project]
    const refused = await refusal(roots.resolve(other))
    expect(refused.message).toBe(`cwd ${other} is outside the allowed roots: ${project}`)
    expect(refused.hint).toContain('register it as a project (hangar projects add)')
    // The data dir stays out even when a project would hold it.
    projects = [root]
    expect((await refusal(roots.resolve(dataDir))).message).toContain("inside Hangar's data dir")
  })
})
