// scripts/check-no-git-push.mjs: runtime code never pushes. The real src/ passes; planted push
// invocations are reported with file:line and exit 1; the allow marker needs a reason.
import { execFile } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTempDir } from '../helpers/store-engines.js'

interface Finding {
  file: string
  line: number
  source: string
}

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const script = path.join(repo, 'scripts/check-no-git-push.mjs')
// A plain .mjs script without declarations: typed here, at the one place the test uses it.
const { findGitPush, MESSAGE } = (await import(pathToFileURL(script).href)) as {
  findGitPush(text: string, file: string): Finding[]
  MESSAGE: string
}

function runCheck(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { cwd }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })
    })
  })
}

const lineNumbers = (text: string, file = 'x.ts') => findGitPush(text, file).map((finding) => finding.line)

describe('check-no-git-push', () => {
  let root: string

  beforeAll(async () => {
    root = await makeTempDir('hangar-no-push-')
    await mkdir(path.join(root, 'src/nested'), { recursive: true })
    await writeFile(
      path.join(root, 'src/sync.ts'),
      [
        "import { execFile, spawn } from 'node:child_process'",
        "execFile('git', ['push', 'origin', 'main'])",
        'spawn("git", ["-C", dir, "push"])',
        'exec(`git push --force`)',
        '',
      ].join('\n'),
    )
    await writeFile(
      path.join(root, 'src/nested/helper.mjs'),
      ['// pushes through a wrapper', "await runGit(['push'])", ''].join('\n'),
    )
    await writeFile(path.join(root, 'src/clean.ts'), "const list = []\nlist.push('x')\n")
  })

  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('passes on the real src/', async () => {
    const result = await runCheck([], repo)
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' })
  })

  it('reports each planted push with file:line and exits 1', async () => {
    const result = await runCheck(['src'], root)
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim().split('\n').sort()).toEqual(
      [
        `src/nested/helper.mjs:2: ${MESSAGE}`,
        `src/sync.ts:2: ${MESSAGE}`,
        `src/sync.ts:3: ${MESSAGE}`,
        `src/sync.ts:4: ${MESSAGE}`,
      ].sort(),
    )
  })

  it('allows a push marked with a reason on the line above or the same line', () => {
    const marker = "// hangar:allow-git-push: mirrors to the user's own backup"
    expect(lineNumbers([marker, "execFile('git', ['push', 'origin', 'main'])"].join('\n'))).toEqual([])
    expect(lineNumbers(`runGit(['push']) ${marker}`)).toEqual([])
    // Only the line right below the marker is covered.
    expect(lineNumbers([marker, "runGit(['fetch'])", "runGit(['push'])"].join('\n'))).toEqual([3])
  })

  it('does not accept a marker without a reason', () => {
    expect(lineNumbers(['// hangar:allow-git-push:', "runGit(['push'])"].join('\n'))).toEqual([2])
    expect(lineNumbers("runGit(['push']) // hangar:allow-git-push:   ")).toEqual([1])
  })

  it('ignores array pushes, other git commands and comments', () => {
    const text = [
      'const push = []',
      'list.push(x)',
      "execFile('git', ['pull'])",
      '// we never push: the workspace is the only cross-run state',
      '/* not even `git push` here */',
      "gitArgs.push('--quiet')",
      "const url = 'https://example.invalid/a' // git push would be wrong",
      '',
    ].join('\n')
    expect(findGitPush(text, 'x.ts')).toEqual([])
  })

  it('catches the common spellings of a push', () => {
    const cases = [
      "await execFileAsync('git', ['-C', workspace, 'push', '--tags'])",
      'git(["push"])',
      "sh('cd repo && git push origin HEAD')",
      'const command = "git -C /tmp/x push"',
      "spawnSync('git', [\n  'push'])", // across lines: not caught (line 1 has no push, line 2 no git)
    ]
    expect(cases.map((text) => lineNumbers(text))).toEqual([[1], [1], [1], [1], []])
    expect(findGitPush("runGit(['push'])", 'src/a.ts')).toEqual([
      { file: 'src/a.ts', line: 1, source: "runGit(['push'])" },
    ])
  })
})
