import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { placementRecordFile, removeLeftoverPlacements } from './skill-placements.js'
import { loadProfileSkills, loadSkill, placeSkills, SKILL_FILE_LIMIT } from './skills.js'

async function makeSkill(root: string, name: string, options: { assets?: boolean } = {}) {
  const directory = path.join(root, 'skills', name)
  await mkdir(path.join(directory, 'references'), { recursive: true })
  await writeFile(
    path.join(directory, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Reviews code for ${name}\n---\nRead references/checklist.md first.\n`,
  )
  await writeFile(path.join(directory, 'references', 'checklist.md'), '- tests pass\n')
  await writeFile(path.join(directory, 'references', 'unused.md'), 'not named in the body\n')
  if (options.assets) {
    await mkdir(path.join(directory, 'assets'))
    await writeFile(path.join(directory, 'assets', 'logo.txt'), 'logo')
  }
  return directory
}

async function gitWorkspace(root: string) {
  const workspace = path.join(root, 'repo')
  await mkdir(workspace)
  execFileSync('git', ['init', '-q'], { cwd: workspace })
  return workspace
}

const exclude = (workspace: string) =>
  readFile(path.join(workspace, '.git/info/exclude'), 'utf8').catch(() => '')
const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  )

describe('skills', () => {
  it('loads a skill with the references its body names', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    const skill = await loadSkill(await makeSkill(root, 'review'))
    expect(skill).toMatchObject({ name: 'review', description: 'Reviews code for review', hasAssets: false })
    expect(skill.references.map((reference) => reference.path)).toEqual(['references/checklist.md'])
  })

  it('refuses a folder without SKILL.md or without a valid name', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    await expect(loadSkill(root)).rejects.toMatchObject({ code: 'config_invalid' })
    await writeFile(path.join(root, 'SKILL.md'), '---\ndescription: x\n---\nbody')
    await expect(loadSkill(root)).rejects.toThrow(/front-matter needs a name/)
  })

  it('copies skills into the native folder, excludes them from git, and removes them afterwards', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    const workspace = await gitWorkspace(root)
    const skill = await loadSkill(await makeSkill(root, 'review'))
    const placed = await placeSkills(
      [skill],
      { kind: 'native', directory: '.claude/skills' },
      workspace,
      'do it',
      'run_1',
    )
    expect(placed).toMatchObject({ strategy: 'native', prompt: 'do it', placed: ['.claude/skills/review'] })
    expect((await stat(path.join(workspace, '.claude/skills/review/SKILL.md'))).isFile()).toBe(true)
    expect(await exclude(workspace)).toContain('# hangar:run_1\n/.claude/skills/review\n# /hangar:run_1')
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace }).toString()).toBe('')
    await placed.cleanup()
    expect(await exists(path.join(workspace, '.claude'))).toBe(false)
    expect(await exclude(workspace)).not.toContain('hangar:run_1')
  })

  it('never overwrites the user’s files: an existing target falls back to the prompt', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    const workspace = await gitWorkspace(root)
    await writeFile(path.join(workspace, 'AGENTS.md'), 'the user’s own instructions\n')
    const skill = await loadSkill(await makeSkill(root, 'review'))
    const placed = await placeSkills(
      [skill],
      { kind: 'file', file: 'AGENTS.md' },
      workspace,
      'do it',
      'run_2',
    )
    expect(placed.strategy).toBe('prompt')
    expect(placed.prompt).toContain('<skill name="review"')
    expect(placed.prompt.endsWith('do it')).toBe(true)
    expect(await readFile(path.join(workspace, 'AGENTS.md'), 'utf8')).toBe('the user’s own instructions\n')
    await placed.cleanup()
    expect(await readFile(path.join(workspace, 'AGENTS.md'), 'utf8')).toBe('the user’s own instructions\n')
  })

  it('writes an instruction file when there is none, and removes it afterwards', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    const workspace = await gitWorkspace(root)
    const skill = await loadSkill(await makeSkill(root, 'review'))
    const placed = await placeSkills(
      [skill],
      { kind: 'file', file: 'GEMINI.md' },
      workspace,
      'do it',
      'run_3',
    )
    expect(placed).toMatchObject({ strategy: 'file', prompt: 'do it', placed: ['GEMINI.md'] })
    const text = await readFile(path.join(workspace, 'GEMINI.md'), 'utf8')
    expect(text).toContain('- tests pass')
    expect(text).not.toContain('not named in the body')
    await placed.cleanup()
    expect(await readdir(workspace)).toEqual(['.git'])
  })

  it('injects skills into the prompt and copies their assets into the workspace', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    const workspace = await gitWorkspace(root)
    const skill = await loadSkill(await makeSkill(root, 'brand', { assets: true }))
    const placed = await placeSkills([skill], { kind: 'prompt' }, workspace, 'make a page', 'run_4')
    expect(placed.strategy).toBe('prompt')
    expect(placed.prompt).toContain('.hangar/skills/brand/assets')
    expect(await readFile(path.join(workspace, '.hangar/skills/brand/assets/logo.txt'), 'utf8')).toBe('logo')
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace }).toString()).toBe('')
    await placed.cleanup()
    expect(await readdir(workspace)).toEqual(['.git'])
  })

  // Issue 18 item 3: skills are inlined into prompts (the built-in agent's, and CLI runs by prompt), so a
  // huge reference must not blow up the request, and a profile (from the UI or API too) must not pull
  // files from outside the project into a prompt.
  it('cuts a reference over the limit, with a note saying so', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    const directory = await makeSkill(root, 'review')
    await writeFile(
      path.join(directory, 'references', 'checklist.md'),
      `${'y'.repeat(SKILL_FILE_LIMIT * 3)}END`,
    )
    const [reference] = (await loadSkill(directory)).references
    expect(reference!.text).not.toContain('END')
    expect(reference!.text.length).toBeLessThan(SKILL_FILE_LIMIT + 200)
    expect(reference!.text).toMatch(
      /\[truncated by Hangar: references\/checklist\.md is 97 KB; only its first 32 KB/,
    )
  })

  it('loads profile skills relative to the project, and refuses folders and references outside it', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    const project = path.join(root, 'project')
    await mkdir(project)
    await makeSkill(project, 'review')
    const outside = await makeSkill(root, 'outside')
    expect((await loadProfileSkills(project, ['./skills/review'])).map((skill) => skill.name)).toEqual([
      'review',
    ])
    await expect(loadProfileSkills(project, ['../skills/outside'])).rejects.toThrow(
      /outside the project directory/,
    )
    await expect(loadProfileSkills(project, [outside])).rejects.toThrow(/outside the project directory/)
    await symlink(outside, path.join(project, 'skills', 'linked'))
    await expect(loadProfileSkills(project, ['skills/linked'])).rejects.toMatchObject({
      code: 'config_invalid',
    })
    await expect(loadProfileSkills(project, ['skills/missing'])).rejects.toThrow(/not found in the project/)
    // A reference linking out of its skill folder is not read.
    await writeFile(path.join(root, 'secret.md'), 'SECRET')
    await symlink(
      path.join(root, 'secret.md'),
      path.join(project, 'skills', 'review', 'references', 'leak.md'),
    )
    await writeFile(
      path.join(project, 'skills', 'review', 'SKILL.md'),
      '---\nname: review\n---\nSee references/leak.md\n',
    )
    const [skill] = await loadProfileSkills(project, ['skills/review'])
    expect(skill!.references).toEqual([])
  })

  it('records what it placed, so a crashed run’s skills are removed by a later sweep (issue 18 item 10)', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-skill-'))
    const workspace = await gitWorkspace(root)
    const records = path.join(root, 'runs')
    const skill = await loadSkill(await makeSkill(root, 'review', { assets: true }))
    const strategy = { kind: 'file', file: 'AGENTS.md' } as const
    await placeSkills(
      [skill],
      strategy,
      workspace,
      'hi',
      'run_crashed',
      placementRecordFile(records, 'run_crashed'),
    )
    const alive = await placeSkills(
      [skill],
      { kind: 'native', directory: '.agents/skills' },
      workspace,
      'hi',
      'run_alive',
      placementRecordFile(records, 'run_alive'),
    )
    expect(JSON.parse(await readFile(placementRecordFile(records, 'run_crashed'), 'utf8'))).toEqual({
      workspace,
      marker: 'run_crashed',
      placed: ['AGENTS.md', '.hangar/skills/review/assets'],
    })
    // The crashed run has ended (interrupted); the other one is still running in some process.
    const statuses = new Map([
      ['run_crashed', { status: 'interrupted' }],
      ['run_alive', { status: 'running' }],
    ])
    expect(await removeLeftoverPlacements(records, async () => statuses)).toEqual(['run_crashed'])
    expect(await exists(path.join(workspace, 'AGENTS.md'))).toBe(false)
    expect(await exists(path.join(workspace, '.hangar'))).toBe(false)
    expect(await exclude(workspace)).not.toContain('run_crashed')
    expect(await exclude(workspace)).toContain('# hangar:run_alive')
    expect(await exists(path.join(workspace, '.agents/skills/review/SKILL.md'))).toBe(true)
    expect(await readdir(records)).toEqual(['run_alive.skills.json'])
    // A run that ends normally removes its record with its files.
    await alive.cleanup()
    expect(await readdir(records)).toEqual([])
    expect(await exclude(workspace)).not.toContain('hangar:')
  })
})
