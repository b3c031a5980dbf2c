#!/usr/bin/env node
// Land time (issue 22), numbers only: `npm run build && node scripts/bench-land.mjs`. A runtime of the
// built dist/ on SQLite in a temp dir; a project with BENCH_LAND_BASE_FILES committed files; for a change
// set of 1 and of 1,000 new files (uncommitted in the workspace, as an agent leaves them) it times the
// review (GET diff) and each land strategy end to end through the review service, over BENCH_LAND_RUNS
// rounds (a fresh conversation and workspace each round; the target branch is checked out and clean).
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const RUNS = Number(process.env.BENCH_LAND_RUNS ?? 3)
const BASE_FILES = Number(process.env.BENCH_LAND_BASE_FILES ?? 2000)
const SIZES = [1, 1000]

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
}
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim()

function writeFiles(dir, prefix, count) {
  for (let index = 0; index < count; index++) {
    const sub = path.join(dir, prefix, String(index % 50))
    mkdirSync(sub, { recursive: true })
    writeFileSync(path.join(sub, `f${index}.ts`), `export const v${index} = ${index}\n`.repeat(20))
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function benchLand() {
  const { createRuntime } = await import(path.join(root, 'dist/src/main.js'))
  const { parseConfig } = await import(path.join(root, 'dist/src/core/config.js'))
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-land-'))
  const project = path.join(tmp, 'project')
  mkdirSync(project)
  git(project, 'init', '-q', '-b', 'main')
  writeFiles(project, 'base', BASE_FILES)
  git(project, 'add', '-A')
  git(project, 'commit', '-q', '-m', 'base')
  const runtime = await createRuntime({
    dataDir: path.join(tmp, 'data'),
    config: parseConfig(''),
    projectDir: project,
    env: { PATH: process.env.PATH, HOME: tmp },
    logLevel: 'silent',
  })
  const owner = runtime.owner
  const caller = { userId: owner.id, actor: `user:${owner.id}`, mayLand: true }
  const results = []
  try {
    for (const size of SIZES) {
      for (const strategy of ['merge', 'squash', 'rebase']) {
        const diffs = []
        const lands = []
        for (let round = 0; round < RUNS; round++) {
          const conversation = await runtime.store.forUser(owner.id).conversations.create({
            title: `bench ${size} ${strategy} ${round}`,
            profile: 'builtin',
            project: 'project',
          })
          const workspace = await runtime.workspaces.forConversation(owner.id, conversation.id)
          writeFiles(workspace.path, `change-${size}-${strategy}-${round}`, size)
          let started = performance.now()
          const diff = await runtime.review.diff(caller, workspace.id)
          diffs.push(performance.now() - started)
          if (diff.files.length !== size) throw new Error(`expected ${size} files, got ${diff.files.length}`)
          started = performance.now()
          await runtime.review.land(caller, workspace.id, { strategy })
          lands.push(performance.now() - started)
          await runtime.workspaces.remove(owner.id, workspace.id)
        }
        results.push({ size, strategy, diffMs: median(diffs), landMs: median(lands) })
      }
    }
  } finally {
    await runtime.close()
    rmSync(tmp, { recursive: true, force: true })
  }
  return { baseFiles: BASE_FILES, runs: RUNS, results }
}

export function printLandBench(bench) {
  console.log(
    `\nland (project of ${bench.baseFiles} files, median of ${bench.runs}, SQLite, through the review service)`,
  )
  for (const row of bench.results)
    console.log(
      `  ${String(row.size).padStart(5)} new file(s)  ${row.strategy.padEnd(6)}  diff ${row.diffMs.toFixed(0).padStart(6)} ms   land ${row.landMs.toFixed(0).padStart(6)} ms`,
    )
}

if (import.meta.url === `file://${process.argv[1]}`) printLandBench(await benchLand())
