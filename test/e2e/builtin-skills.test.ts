// Issue 18 item 3: the built-in agent ignored the profile's skills — CLI runs got them, a built-in run sent
// only its fixed system prompt, so a reviewer profile's checklist never reached the model. Now a built-in
// run loads the profile's skills with the same loader as CLI runs (SKILL.md and the references it names,
// inlined, each bounded with a truncation note; assets copied into the workspace and removed afterwards),
// reports them in `run-start`, and refuses a skill folder outside the project directory.
// A real runtime in this process (SQLite, scheduler) in front of the mock model server, which records every
// request body: the skill text must be in what the model received.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { Run } from '../../src/store/repositories/runs-repository.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { makeTempDir } from '../helpers/store-engines.js'

const ENDED = ['succeeded', 'failed', 'cancelled', 'interrupted', 'awaiting_confirmation']
const BODY_MARKER = 'Always check the error paths first (house-review body).'
const CHECKLIST_MARKER = 'Every new route has a test (house checklist).'
const HUGE_END_MARKER = 'END-OF-THE-HUGE-REFERENCE'

describe('the built-in agent gets its profile skills (issue 18 item 3)', { timeout: 120_000 }, () => {
  let mock: MockModelServer
  let root: string
  let project: string
  let runtime: Runtime

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-builtin-skills-')
    project = path.join(root, 'project')
    const skill = path.join(project, 'skills', 'house-review')
    await mkdir(path.join(skill, 'references'), { recursive: true })
    await mkdir(path.join(skill, 'assets'))
    execFileSync('git', ['init', '-q'], { cwd: project })
    await writeFile(
      path.join(skill, 'SKILL.md'),
      [
        '---',
        'name: house-review',
        'description: Reviews changes the house way',
        '---',
        BODY_MARKER,
        'Read references/checklist.md, then references/huge.md.',
      ].join('\n'),
    )
    await writeFile(path.join(skill, 'references', 'checklist.md'), `${CHECKLIST_MARKER}\n`)
    await writeFile(path.join(skill, 'references', 'huge.md'), `${'x'.repeat(300_000)}\n${HUGE_END_MARKER}\n`)
    await writeFile(path.join(skill, 'assets', 'logo.txt'), 'logo')
    // A skill folder outside the project: a profile must not be able to read it.
    const outside = path.join(root, 'outside')
    await mkdir(outside)
    await writeFile(path.join(outside, 'SKILL.md'), '---\nname: outside\ndescription: x\n---\nsecret\n')

    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      config: parseConfig(
        ['agents:', '  reviewer:', '    adapter: builtin', '    skills: [./skills/house-review]'].join('\n'),
      ),
      projectDir: project,
      env: { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: 'sk-ant-skills-test-key-000000000001' },
      logLevel: 'silent',
    })
    // What POST /api/profiles stores for the owner: a path relative to the project directory.
    const profiles = runtime.store.forUser(runtime.owner.id).profiles
    await profiles.put('ui-reviewer', { adapter: 'builtin', skills: ['skills/house-review'] })
    await profiles.put('escaper', { adapter: 'builtin', skills: ['../outside'] })
    runtime.scheduler.start(100)
  })

  afterAll(async () => {
    await runtime?.scheduler.stop()
    await runtime?.close()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  beforeEach(() => mock.reset())

  async function runToEnd(agent: string): Promise<Run> {
    const { id } = await runtime.submitRun(runtime.owner.id, {
      agent,
      prompt: 'Review my change.',
      cwd: project,
    })
    const deadline = Date.now() + 60_000
    for (;;) {
      const run = await runtime.store.forUser(runtime.owner.id).runs.get(id)
      if (run && ENDED.includes(run.status)) return run
      if (Date.now() > deadline) throw new Error(`run ${id} is still ${run?.status}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  async function expectSkillsReachedTheModel(run: Run) {
    expect(run.status, run.reason ?? '').toBe('succeeded')
    const generations = mock.requests.filter((request) => request.family !== 'models')
    expect(generations.length).toBeGreaterThan(0)
    for (const request of generations) {
      expect(request.rawBody).toContain(BODY_MARKER)
      expect(request.rawBody).toContain(CHECKLIST_MARKER)
      expect(request.rawBody).toContain('.hangar/skills/house-review/assets')
      // The huge reference is cut, and the model is told so.
      expect(request.rawBody).not.toContain(HUGE_END_MARKER)
      expect(request.rawBody).toMatch(/truncated by Hangar: references\/huge\.md/)
      expect(request.rawBody.length).toBeLessThan(150_000)
    }
    const events = await runtime.store.forUser(runtime.owner.id).runs.listEvents(run.id)
    expect(events.find((event) => event.type === 'run-start')).toMatchObject({
      adapter: 'builtin',
      skills: { strategy: 'prompt', names: ['house-review'] },
    })
    // The assets were placed for the run only.
    expect(existsSync(path.join(project, '.hangar', 'skills'))).toBe(false)
  }

  it('a hangar.yaml profile: SKILL.md and its references reach the model, run-start names them', async () => {
    await expectSkillsReachedTheModel(await runToEnd('reviewer'))
  })

  it('a profile made in the UI or API: the same skills, the same way', async () => {
    await expectSkillsReachedTheModel(await runToEnd('ui-reviewer'))
  })

  it('refuses a skill folder outside the project directory, before any model call', async () => {
    const run = await runToEnd('escaper')
    expect(run.status).toBe('failed')
    expect(run.reason).toMatch(/outside the project directory/)
    expect(mock.requests.filter((request) => request.family !== 'models')).toHaveLength(0)
  })
})
