// Skills: a folder with SKILL.md (front-matter `name`, `description`), optional `references/` and
// `assets/`. They reach an agent in one of three ways, picked by its capability: copied into its native
// skills folder, written as an instruction file (AGENTS.md, GEMINI.md, .cursorrules), or put into the
// prompt. Hangar never overwrites a user's file — where its target exists it falls back to the prompt —
// lists what it placed in .git/info/exclude, and removes all of it when the run ends (or, after a crash,
// at the daemon's next start: skill-placements.ts).
import { cp, mkdir, open, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseYaml } from 'yaml'
import { AppError } from '../core/errors.js'
import {
  excludeMarkers,
  gitExcludeFile,
  removeExcludeBlock,
  removePlacedFiles,
  writePlacementRecord,
} from './skill-placements.js'
import type { SkillStrategy } from './types.js'

export interface Skill {
  name: string
  description: string
  directory: string
  /** SKILL.md without its front-matter. */
  body: string
  /** Files under references/ that the body names, with their text. */
  references: { path: string; text: string }[]
  hasAssets: boolean
}

export interface PlacedSkills {
  /** What was used in the end (the capability's strategy, or `prompt` as the fallback). */
  strategy: SkillStrategy['kind'] | 'none'
  /** The prompt to send: the user's, with skills prepended when they go by prompt. */
  prompt: string
  /** Workspace-relative paths Hangar created. */
  placed: string[]
  cleanup(): Promise<void>
}

const exists = (file: string) =>
  stat(file)
    .then(() => true)
    .catch(() => false)

/** Bytes of one skill file (SKILL.md or a reference) that are inlined; the rest is cut with a note. */
export const SKILL_FILE_LIMIT = 32 * 1024

/** The first `SKILL_FILE_LIMIT` bytes of a file, with a note the model reads when the rest was cut. */
async function readBounded(file: string, label: string): Promise<string> {
  const handle = await open(file, 'r')
  try {
    const { size } = await handle.stat()
    const buffer = Buffer.alloc(Math.min(size, SKILL_FILE_LIMIT))
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    // A cut may split a UTF-8 sequence: drop the replacement character it leaves.
    const text = buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/\uFFFD$/, '')
    if (size <= SKILL_FILE_LIMIT) return text
    return `${text}\n[truncated by Hangar: ${label} is ${Math.ceil(size / 1024)} KB; only its first ${SKILL_FILE_LIMIT / 1024} KB are inlined]`
  } finally {
    await handle.close()
  }
}

const inside = (root: string, candidate: string) => {
  const relative = path.relative(root, candidate)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/**
 * The skills of a profile, for every kind of run (CLI or built-in) and every profile source (hangar.yaml,
 * UI, API). Paths are relative to the project directory and must stay inside it, links resolved: a
 * profile must not read files elsewhere on the daemon's machine into a prompt.
 */
export async function loadProfileSkills(
  projectDir: string,
  directories: readonly string[] | undefined,
): Promise<Skill[]> {
  if (!directories?.length) return []
  const root = await realpath(projectDir)
  const skills: Skill[] = []
  for (const directory of directories) {
    const resolved = await realpath(path.resolve(projectDir, directory)).catch(() => {
      throw new AppError('config_invalid', `skill ${directory} not found in the project directory`, {
        hint: `skills paths are relative to ${projectDir}`,
      })
    })
    if (!inside(root, resolved)) {
      throw new AppError('config_invalid', `skill ${directory} is outside the project directory`, {
        hint: `put the skill folder under ${projectDir} and name it by a relative path such as ./skills/review`,
      })
    }
    skills.push(await loadSkill(resolved))
  }
  return skills
}

export async function loadSkill(directory: string): Promise<Skill> {
  const file = path.join(directory, 'SKILL.md')
  let text: string
  try {
    text = await readBounded(file, 'SKILL.md')
  } catch {
    throw new AppError('config_invalid', `skill ${directory} has no SKILL.md`, {
      hint: 'a skill is a folder with a SKILL.md whose front-matter has name and description',
    })
  }
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text)
  const frontMatter = match ? (parseYaml(match[1]!) as Record<string, unknown> | null) : null
  const name = typeof frontMatter?.name === 'string' ? frontMatter.name.trim() : ''
  if (!/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/.test(name)) {
    throw new AppError(
      'config_invalid',
      `${file}: front-matter needs a name of letters, digits, ".", "_" or "-"`,
    )
  }
  const body = (match ? match[2]! : text).trim()
  const referencesDirectory = path.join(directory, 'references')
  const referenceFiles = await readdir(referencesDirectory).catch(() => [] as string[])
  const references = []
  const realDirectory = await realpath(directory).catch(() => directory)
  for (const entry of referenceFiles.sort()) {
    if (!body.includes(`references/${entry}`)) continue
    // A reference that links out of its skill folder is not read (see loadProfileSkills).
    const file = await realpath(path.join(referencesDirectory, entry)).catch(() => null)
    if (!file || !inside(realDirectory, file) || !(await stat(file)).isFile()) continue
    references.push({ path: `references/${entry}`, text: await readBounded(file, `references/${entry}`) })
  }
  return {
    name,
    description: typeof frontMatter?.description === 'string' ? frontMatter.description.trim() : '',
    directory,
    body,
    references,
    hasAssets: await exists(path.join(directory, 'assets')),
  }
}

/** Lists Hangar's files in the exclude file, between marker comments (git has no trailing comments). */
async function addExcludes(workspace: string, marker: string, paths: string[]): Promise<void> {
  const file = await gitExcludeFile(workspace)
  if (!file || paths.length === 0) return
  const { begin, end } = excludeMarkers(marker)
  await mkdir(path.dirname(file), { recursive: true })
  const before = await readFile(file, 'utf8').catch(() => '')
  const block = [begin, ...paths.map((entry) => `/${entry}`), end].join('\n')
  await writeFile(file, `${before}${before && !before.endsWith('\n') ? '\n' : ''}${block}\n`)
}

export function skillsPrompt(skills: readonly Skill[], prompt: string, assetsRoot?: string): string {
  const blocks = skills.map((skill) => {
    const references = skill.references.map(
      (reference) => `\n\n[${reference.path}]\n${reference.text.trim()}`,
    )
    const assets =
      skill.hasAssets && assetsRoot ? `\n\n(Its assets are in ${assetsRoot}/${skill.name}/assets.)` : ''
    return `<skill name="${skill.name}" description="${skill.description.replace(/"/g, "'")}">\n${skill.body}${references.join('')}${assets}\n</skill>`
  })
  return blocks.length ? `${blocks.join('\n\n')}\n\n${prompt}` : prompt
}

const ASSETS_DIRECTORY = '.hangar/skills'

/**
 * Puts skills where the agent will find them; `marker` (the run id) tags the exclude lines. With
 * `recordFile`, each path is recorded there before it is created, so a daemon that dies before the
 * cleanup can remove it at its next start (skill-placements.ts).
 */
export async function placeSkills(
  skills: readonly Skill[],
  strategy: SkillStrategy,
  workspace: string,
  prompt: string,
  marker: string,
  recordFile?: string,
): Promise<PlacedSkills> {
  if (skills.length === 0) return { strategy: 'none', prompt, placed: [], cleanup: async () => {} }
  const placed: string[] = []
  const record = async (next: string) => {
    if (recordFile) await writePlacementRecord(recordFile, { workspace, marker, placed: [...placed, next] })
  }
  let kind: PlacedSkills['strategy'] = strategy.kind
  let finalPrompt = prompt

  if (strategy.kind === 'native') {
    const targets = skills.map((skill) => path.join(strategy.directory, skill.name))
    if ((await Promise.all(targets.map((target) => exists(path.join(workspace, target))))).some(Boolean))
      kind = 'prompt'
    else {
      for (const [index, skill] of skills.entries()) {
        await record(targets[index]!)
        // A copy, not a symlink: the agent may run in a sandbox that cannot follow links out of the workspace.
        await cp(skill.directory, path.join(workspace, targets[index]!), { recursive: true })
        placed.push(targets[index]!)
      }
    }
  } else if (strategy.kind === 'file') {
    if (await exists(path.join(workspace, strategy.file))) kind = 'prompt'
    else {
      await record(strategy.file)
      await writeFile(path.join(workspace, strategy.file), `${skillsPrompt(skills, '').trim()}\n`)
      placed.push(strategy.file)
    }
  }
  if (kind !== 'native') {
    const withAssets = skills.filter((skill) => skill.hasAssets)
    for (const skill of withAssets) {
      const target = path.join(ASSETS_DIRECTORY, skill.name, 'assets')
      await record(target)
      await cp(path.join(skill.directory, 'assets'), path.join(workspace, target), { recursive: true })
      placed.push(target)
    }
    if (kind === 'prompt') finalPrompt = skillsPrompt(skills, prompt, ASSETS_DIRECTORY)
  }
  await addExcludes(workspace, marker, placed)
  return {
    strategy: kind,
    prompt: finalPrompt,
    placed,
    async cleanup() {
      await removePlacedFiles(workspace, placed)
      await removeExcludeBlock(workspace, marker)
      if (recordFile) await rm(recordFile, { force: true })
    },
  }
}
