import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../core/events.js'
import { gitIn } from '../../test/helpers/git-fixture.js'
import { makeTempDir } from '../../test/helpers/store-engines.js'
import { startRunChanges } from './run-changes.js'

async function repository(): Promise<string> {
  const dir = await makeTempDir('hangar-run-changes-')
  gitIn(dir, 'init', '-q')
  await writeFile(path.join(dir, '.gitignore'), 'build/\n')
  await writeFile(path.join(dir, 'kept.txt'), 'one\n')
  await writeFile(path.join(dir, 'gone.txt'), 'bye\n')
  await writeFile(path.join(dir, 'dirty.txt'), 'committed\n')
  gitIn(dir, 'add', '.')
  gitIn(dir, 'commit', '-qm', 'base')
  return dir
}

describe('run changes', () => {
  it('reports what changed during the run and was not reported, never what was dirty before', async () => {
    const dir = await repository()
    await writeFile(path.join(dir, 'dirty.txt'), 'the user was here\n')
    await writeFile(path.join(dir, 'scratch.txt'), 'untracked before\n')
    const indexBefore = await readFile(path.join(dir, '.git', 'index'))
    const changes = await startRunChanges(dir)

    await writeFile(path.join(dir, 'kept.txt'), 'one\ntwo\n')
    await rm(path.join(dir, 'gone.txt'))
    await mkdir(path.join(dir, 'src'))
    await writeFile(path.join(dir, 'src', 'new.ts'), 'export {}\n')
    await writeFile(path.join(dir, 'reported.txt'), 'the parser said so\n')
    await mkdir(path.join(dir, 'build'))
    await writeFile(path.join(dir, 'build', 'out.js'), 'ignored\n')
    changes.note({ type: 'file-change', path: 'reported.txt', kind: 'create' })

    const events: AgentEvent[] = []
    await changes.report((event) => events.push(event))
    expect(events).toEqual([
      { type: 'file-change', path: 'gone.txt', kind: 'delete' },
      {
        type: 'file-change',
        path: 'kept.txt',
        kind: 'modify',
        diff: expect.stringMatching(/^--- a\/kept.txt\n\+\+\+ b\/kept.txt\n@@ .* @@\n one\n\+two\n$/),
      },
      {
        type: 'file-change',
        path: 'src/new.ts',
        kind: 'create',
        diff: expect.stringContaining('+export {}'),
      },
    ])
    // The user's index is as it was: the snapshots used a private one.
    expect(await readFile(path.join(dir, '.git', 'index'))).toEqual(indexBefore)
    expect(gitIn(dir, 'status', '--porcelain')).toContain('?? scratch.txt')
    await rm(dir, { recursive: true, force: true })
  })

  it('reports paths relative to a workspace that is a folder inside the repository, and only under it', async () => {
    const dir = await repository()
    await mkdir(path.join(dir, 'app'))
    const changes = await startRunChanges(path.join(dir, 'app'))
    await writeFile(path.join(dir, 'app', 'a.txt'), 'a\n')
    await writeFile(path.join(dir, 'outside.txt'), 'not in the workspace\n')
    const events: AgentEvent[] = []
    await changes.report((event) => events.push(event))
    expect(events).toEqual([expect.objectContaining({ path: 'a.txt', kind: 'create' })])
    await rm(dir, { recursive: true, force: true })
  })

  it('synthesises nothing outside git, and does not start git there', async () => {
    const dir = await makeTempDir('hangar-run-changes-')
    // A git that only records that it was started: outside any repository it must not be.
    const bin = await makeTempDir('hangar-run-changes-bin-')
    const started = path.join(bin, 'started')
    await writeFile(path.join(bin, 'git'), `#!/bin/sh\necho "$@" >> "${started}"\nexit 128\n`, {
      mode: 0o755,
    })
    const pathBefore = process.env.PATH
    process.env.PATH = `${bin}:${pathBefore ?? ''}`
    let changes
    try {
      changes = await startRunChanges(dir)
    } finally {
      process.env.PATH = pathBefore
    }
    await expect(readFile(started, 'utf8')).rejects.toThrow()
    await rm(bin, { recursive: true, force: true })
    await writeFile(path.join(dir, 'a.txt'), 'a\n')
    const events: AgentEvent[] = []
    await changes.report((event) => events.push(event))
    expect(events).toEqual([])
    await rm(dir, { recursive: true, force: true })
  })
})
