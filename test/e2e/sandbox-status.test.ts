// `hangar agents` says whether runs can be sandboxed here and which profiles are.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'

describe('hangar agents: sandbox status', () => {
  let root: string
  let project: string

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-sandbox-status-'))
    project = path.join(root, 'shop')
    await mkdir(path.join(root, 'home'), { recursive: true })
    await mkdir(project)
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'projects:',
        '  shop: { sandbox: workspace }',
        'agents:',
        '  boxed: { adapter: claude-code }',
        '  open: { adapter: codex, sandbox: "off" }',
      ].join('\n'),
    )
  })

  afterAll(() => rm(root, { recursive: true, force: true }))

  const env = (extra: Record<string, string> = {}) =>
    cleanEnv({ HOME: path.join(root, 'home'), HANGAR_DATA_DIR: path.join(root, 'data'), ...extra })

  it('names bubblewrap and each profile (the project default included)', async () => {
    const result = await runHangar(['agents'], { env: env(), cwd: project, timeoutMs: 60_000 })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/sandbox: bubblewrap \d+\.\d+\.\d+ can confine runs here/)
    expect(result.stdout).toContain('    boxed: sandboxed\n')
    expect(result.stdout).toContain('    open: not sandboxed (sandbox: off)\n')
  })

  it('says why not, with the fix, when bubblewrap is missing', async () => {
    const result = await runHangar(['agents'], {
      env: env({ HANGAR_BWRAP: path.join(root, 'no-bwrap') }),
      cwd: project,
      timeoutMs: 60_000,
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain('sandbox: unavailable — ')
    expect(result.stdout).toContain('apt-get install bubblewrap')
    expect(result.stdout).toContain('    boxed: sandboxed (its runs fail until bubblewrap works)\n')
  })
})
