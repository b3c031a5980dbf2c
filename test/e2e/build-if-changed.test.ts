// `npm start` rebuilt everything on each start (10–23 s): scripts/build-if-changed.mjs builds a part only
// when its sources changed since its last build, and always when its output or stamp is missing.
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
type Times = Record<string, number>
const { buildIfChanged, partsToBuild, PARTS, STAMP_FILE } = (await import(
  pathToFileURL(path.join(repo, 'scripts/build-if-changed.mjs')).href
)) as {
  buildIfChanged: (
    root: string,
    options: { force?: boolean; run: (command: string, args: string[], cwd: string) => void },
  ) => string[]
  partsToBuild: (facts: {
    times: Times
    stamp: Times
    outputs: Record<string, boolean>
    force?: boolean
  }) => string[]
  PARTS: Record<string, { output: string }>
  STAMP_FILE: string
}

describe('build-if-changed', () => {
  it('builds a part only when an input is newer than its stamp, or its output or stamp is missing', () => {
    const outputs = { daemon: true, web: true }
    const times = { daemon: 100, web: 50 }
    expect(partsToBuild({ times, stamp: { daemon: 100, web: 50 }, outputs })).toEqual([])
    expect(partsToBuild({ times, stamp: { daemon: 90, web: 50 }, outputs })).toEqual(['daemon'])
    expect(partsToBuild({ times, stamp: { daemon: 100 }, outputs })).toEqual(['web'])
    expect(
      partsToBuild({ times, stamp: { daemon: 100, web: 50 }, outputs: { daemon: true, web: false } }),
    ).toEqual(['web'])
    expect(partsToBuild({ times, stamp: { daemon: 100, web: 50 }, outputs, force: true })).toEqual([
      'daemon',
      'web',
    ])
  })

  describe('on a tree', () => {
    let root: string
    const built: string[][] = []
    // Stands in for tsc and vite: records the command (the test makes the outputs).
    const run = (command: string, args: string[]) => {
      built.push([command, ...args])
    }
    const touch = async (file: string, seconds: number) => {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true })
      await writeFile(path.join(root, file), 'x')
      await utimes(path.join(root, file), seconds, seconds)
    }
    const makeOutputs = async () => {
      for (const part of Object.values(PARTS)) await touch(part.output, 1)
    }

    beforeEach(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'hangar-build-'))
      built.length = 0
      await touch('src/main.ts', 1000)
      await touch('src/core/events.ts', 1000)
      await touch('web/src/app.tsx', 1000)
      await touch('package.json', 1000)
      // Directories carry mtimes too (a deleted file changes its directory's).
      for (const directory of ['src', 'src/core', 'web', 'web/src'])
        await utimes(path.join(root, directory), 1000, 1000)
    })
    afterEach(async () => {
      await rm(root, { recursive: true, force: true })
    })

    it('skips both parts when nothing changed, and rebuilds only what an edit touches', async () => {
      expect(buildIfChanged(root, { run })).toEqual(['daemon', 'web'])
      await makeOutputs()
      expect(existsSync(path.join(root, STAMP_FILE))).toBe(true)
      built.length = 0
      expect(buildIfChanged(root, { run })).toEqual([])
      expect(built).toEqual([])

      await touch('web/src/app.tsx', 2000)
      expect(buildIfChanged(root, { run })).toEqual(['web'])
      await touch('src/main.ts', 3000)
      expect(buildIfChanged(root, { run })).toEqual(['daemon'])
      // The UI imports src/core: an edit there rebuilds both.
      await touch('src/core/events.ts', 4000)
      expect(buildIfChanged(root, { run })).toEqual(['daemon', 'web'])
      expect(buildIfChanged(root, { run })).toEqual([])
    })

    it('rebuilds a part whose output is gone, and everything with force', async () => {
      buildIfChanged(root, { run })
      await makeOutputs()
      await rm(path.join(root, PARTS.web!.output))
      expect(buildIfChanged(root, { run })).toEqual(['web'])
      await makeOutputs()
      expect(buildIfChanged(root, { run, force: true })).toEqual(['daemon', 'web'])
    })
  })
})
