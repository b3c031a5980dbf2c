// An approved run_command of a built-in agent whose profile has `sandbox: workspace`: the real tool, the
// real bubblewrap, the real store (both engines are exercised by the store suites; SQLite here).
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRunCommandTool } from '../agent/tools/run-command-tool.js'
import { ConfigSchema } from '../core/config.js'
import { createCommandSandboxes } from './command-sandbox.js'

describe('command sandbox', () => {
  let root: string
  let home: string
  let dataDir: string
  let workspace: string

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-command-sandbox-'))
    home = path.join(root, 'home')
    dataDir = path.join(root, 'data')
    workspace = path.join(root, 'project')
    for (const directory of [path.join(home, '.ssh'), dataDir, workspace])
      await mkdir(directory, { recursive: true })
    await writeFile(path.join(home, '.ssh', 'id_rsa'), 'FAKE KEY')
    await writeFile(path.join(dataDir, 'secret.key'), 'INSTANCE KEY')
  })

  afterAll(() => rm(root, { recursive: true, force: true }))

  function sandboxes(sandbox: 'off' | 'workspace', env: Record<string, string> = {}) {
    const config = ConfigSchema.parse({ agents: { helper: { adapter: 'builtin', sandbox } } })
    const store = {
      users: { findById: async () => ({ role: 'owner' }) },
      forUser: () => ({
        runs: { get: async () => ({ agent: 'helper' }) },
        profiles: { list: async () => [] },
      }),
    } as unknown as Parameters<typeof createCommandSandboxes>[0]['store']
    return createCommandSandboxes({
      store,
      config,
      env: { HOME: home, PATH: process.env.PATH, ...env },
      dataDir,
      projectDir: workspace,
    })
  }

  it('runs an approved command confined: no home, no data dir, no daemon, no network; the workspace writable', async () => {
    const wrapCommand = await sandboxes('workspace')('user', 'run', workspace)
    expect(wrapCommand).toBeDefined()
    const command = [
      `cat ${path.join(home, '.ssh', 'id_rsa')} || echo no-ssh`,
      `cat ${path.join(dataDir, 'secret.key')} || echo no-secret`,
      `cat /proc/${process.pid}/environ > /dev/null || echo no-environ`,
      `node -e "require('net').connect(5432,'127.0.0.1').on('error',e=>console.log('postgres',e.code))"`,
      `node -e "require('net').connect(443,'1.1.1.1').on('error',e=>console.log('public',e.code))"`,
      'echo written > made.txt',
    ].join('; ')
    const output = await createRunCommandTool({ environment: { PATH: process.env.PATH, HOME: home } }).apply(
      { command },
      { workspace, wrapCommand: wrapCommand! },
      { summary: '', classification: 'destructive_update', precondition: null },
    )
    expect(output.content).not.toContain('FAKE KEY')
    expect(output.content).not.toContain('INSTANCE KEY')
    for (const line of ['no-ssh', 'no-secret', 'no-environ', 'postgres ECONNREFUSED', 'public ENETUNREACH'])
      expect(output.content).toContain(line)
    expect(await readFile(path.join(workspace, 'made.txt'), 'utf8')).toBe('written\n')
  })

  it('kills every process of the sandbox when the command times out, one that left its session included', async () => {
    const wrapCommand = await sandboxes('workspace')('user', 'run', workspace)
    const marker = `hangar-sandbox-timeout-${process.pid}-${Date.now()}`
    const command = `setsid sh -c 'sleep 600; echo ${marker}' > /dev/null 2>&1 < /dev/null & sleep 600`
    const output = await createRunCommandTool({ environment: { PATH: process.env.PATH, HOME: home } }).apply(
      { command, timeout_seconds: 1 },
      { workspace, wrapCommand: wrapCommand! },
      { summary: '', classification: 'destructive_update', precondition: null },
    )
    expect(output.content).toContain('[timed out after 1 s')
    const alive = () => {
      try {
        return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).trim()
      } catch {
        return '' // pgrep exits 1 when nothing matches
      }
    }
    await expect.poll(alive, { timeout: 15_000, interval: 100 }).toBe('')
  })

  it('leaves a profile with sandbox: off alone', async () => {
    expect(await sandboxes('off')('user', 'run', workspace)).toBeUndefined()
  })

  it('refuses to run unsandboxed when bubblewrap is missing', async () => {
    await expect(
      sandboxes('workspace', { HANGAR_BWRAP: path.join(root, 'missing-bwrap') })('user', 'run', workspace),
    ).rejects.toMatchObject({ code: 'sandbox_unavailable' })
  })
})
