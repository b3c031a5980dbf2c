// A stop that lands while a scheduling pass is claiming a run: the run that pass starts afterwards is
// cancelled and waited for too (it ends `interrupted`, as every run a stopping daemon had), instead of going
// on against a store its runtime then closes (CI caught it: "driver has already been destroyed").
import { execFileSync } from 'node:child_process'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { cleanEnv } from '../../test/helpers/hangar-cli.js'
import { makeTempDir } from '../../test/helpers/store-engines.js'
import { parseConfig } from '../core/config.js'
import { createRuntime, type Runtime } from '../main.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/bin')

describe('scheduler stop', () => {
  let root: string
  let runtime: Runtime

  beforeEach(async () => {
    root = await makeTempDir('hangar-scheduler-stop-')
    const repo = path.join(root, 'repo')
    await mkdir(repo)
    execFileSync('git', ['init', '-q'], { cwd: repo })
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      config: parseConfig('agents:\n  writer: { adapter: cursor-agent }'),
      projectDir: repo,
      env: cleanEnv({
        PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
        HOME: root,
      }),
      logLevel: 'silent',
    })
  })
  afterEach(async () => {
    await runtime.close()
    await rm(root, { recursive: true, force: true })
  })

  it('cancels and waits for a run that the pass under way claims after the stop began', async () => {
    const realClaim = runtime.runs.claim.bind(runtime.runs)
    let claiming!: () => void
    const claimStarted = new Promise<void>((resolve) => (claiming = resolve))
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    vi.spyOn(runtime.runs, 'claim').mockImplementation(async (...args) => {
      claiming()
      await gate
      return realClaim(...args)
    })
    const run = await runtime.runs.enqueue(runtime.owner.id, {
      agent: 'writer',
      adapter: 'cursor-agent',
      prompt: 'FILE=notes.txt',
      cwd: path.join(root, 'repo'),
    })
    runtime.scheduler.kick()
    await claimStarted
    const stopping = runtime.scheduler.stop()
    release()
    await stopping
    // Stopped means nothing of this runtime is still running: the late run ended before stop returned.
    const stored = await runtime.store.forUser(runtime.owner.id).runs.get(run.id)
    expect(stored?.status).toBe('interrupted')
    expect(runtime.scheduler.runningCount()).toBe(0)
  })
})
