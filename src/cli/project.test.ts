// Finding the project as git finds its repository: walking up from the working directory, and never up into
// a directory of GIT_CEILING_DIRECTORIES.
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeTempDir } from '../../test/helpers/store-engines.js'
import { findProject } from './project.js'

describe('findProject', () => {
  let root: string
  let inner: string
  beforeEach(async () => {
    root = await makeTempDir('hangar-project-')
    inner = path.join(root, 'outer', 'inner')
    await mkdir(inner, { recursive: true })
    await writeFile(path.join(root, 'hangar.yaml'), 'agents: {}\n')
    await mkdir(path.join(root, 'outer', '.git'))
    await writeFile(path.join(root, 'outer', '.git', 'HEAD'), 'ref: refs/heads/main\n')
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  it('takes the nearest hangar.yaml above, else the git root, else the directory itself', () => {
    expect(findProject(inner, {})).toMatchObject({ dir: root, configFile: path.join(root, 'hangar.yaml') })
    expect(findProject(inner, { GIT_CEILING_DIRECTORIES: root })).toMatchObject({
      dir: path.join(root, 'outer'),
      configFile: null,
    })
    expect(findProject(inner, { GIT_CEILING_DIRECTORIES: `relative:${path.join(root, 'outer')}` })).toEqual({
      dir: inner,
      name: 'inner',
      configFile: null,
    })
  })

  it("walks past an empty .git, as git does (Codex's sandbox mounts one over /tmp/.git while it runs a command)", async () => {
    const ceiling = { GIT_CEILING_DIRECTORIES: root }
    const empty = path.join(inner, '.git')
    await mkdir(empty)
    expect(findProject(inner, ceiling).dir).toBe(path.join(root, 'outer'))
    await rm(empty, { recursive: true })
    // A worktree's .git is a file pointing at its git dir.
    await writeFile(empty, `gitdir: ${path.join(root, 'outer', '.git', 'worktrees', 'inner')}\n`)
    expect(findProject(inner, ceiling).dir).toBe(inner)
  })
})
