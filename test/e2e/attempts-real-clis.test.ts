// Compare attempts with the built CLI: `hangar run --agents` starts real Claude Code, real Codex and the
// built-in agent on the mock model at once, each in a worktree of a registered git project, and prints
// them side by side once all finished with the project's real check command (`test -f notes.txt`): the
// CLIs write the file and pass, the built-in agent only proposes the write and fails the check. Then
// `hangar attempts show` and `pick` (the others' worktrees and branches go).
import { existsSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AttemptGroup } from '../../src/core/api-types.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  privateScratchRoot,
  realCliPath,
  startRefusingProxy,
  TEST_API_KEY,
} from '../helpers/real-cli-cases.js'

describe('hangar run --agents with real Claude Code, Codex and the built-in agent', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let shop: string
  let env: NodeJS.ProcessEnv
  let group: AttemptGroup

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    // Not under /tmp: Codex's sandbox will not write in a workspace there.
    root = await privateScratchRoot('attempts-clis')
    shop = path.join(root, 'shop')
    await mkdir(shop)
    await writeFile(
      path.join(shop, 'hangar.yaml'),
      [
        'agents:',
        '  coder: { adapter: codex, model: gpt-5.5 }',
        'projects:',
        '  shop: { check: "test -f notes.txt && echo notes present" }',
      ].join('\n'),
    )
    gitIn(shop, 'init', '-q')
    gitIn(shop, 'add', '.')
    gitIn(shop, 'commit', '-q', '-m', 'start')
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: root,
      HANGAR_DATA_DIR: path.join(root, 'data'),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      OPENAI_BASE_URL: `${mock.url}/v1`,
      OPENAI_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    const added = await runHangar(['projects', 'add', shop], { env, cwd: shop })
    expect(added.code, added.stderr).toBe(0)
  }, 60_000)

  afterAll(async () => {
    await mock?.close()
    await refusing?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('finishes the three side by side with their check results', async () => {
    const result = await runHangar(
      ['run', '--agents', 'claude-code,coder,builtin', 'Please create a file. FILE=notes.txt'],
      { env, cwd: shop, timeoutMs: 300_000 },
    )
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.trim().split('\n')
    expect(lines[0]).toMatch(
      /^AGENT\s+STATUS\s+TIME\s+TOKENS IN\/OUT\s+COST\s+FILES\s+\+\/-\s+CHECK\s+CONVERSATION$/,
    )
    expect(lines[1]).toMatch(
      /^claude-code\s+succeeded\s+\d+\.\ds\s+\d+\/\d+\s+\S+.*\s1\s+\+1 -0\s+passed \(exit 0\)\s+conv_/,
    )
    expect(lines[2]).toMatch(/^coder\s+succeeded\s+.*\s1\s+\+1 -0\s+passed \(exit 0\)\s+conv_/)
    expect(lines[3]).toMatch(/^builtin\s+awaiting_confirmation\s+.*\s0\s+\+0 -0\s+failed \(exit 1\)\s+conv_/)
    // Each finished attempt was announced as it came, and the way to pick one is shown.
    expect(result.stderr).toMatch(/✓ claude-code succeeded in \d+\.\ds · check passed \(exit 0\)/)
    expect(result.stderr).toMatch(/✗ builtin awaiting_confirmation .*check failed \(exit 1\)/)
    const id = /hangar attempts pick (atg_\w+) CONVERSATION/.exec(result.stderr)?.[1]
    expect(id, result.stderr).toBeDefined()

    const shown = await runHangar(['attempts', 'show', id!, '--json'], { env, cwd: shop })
    expect(shown.code, shown.stderr).toBe(0)
    group = JSON.parse(shown.stdout) as AttemptGroup
    expect(group.finished).toBe(true)
    const [claude, codex, builtin] = group.attempts
    for (const attempt of [claude!, codex!]) {
      expect(attempt.check).toMatchObject({ status: 'passed', exitCode: 0 })
      expect(attempt.check.output).toContain('notes present')
      expect(attempt.tokens?.input).toBeGreaterThan(0)
      expect(attempt.costSource).not.toBe('unknown')
    }
    expect(builtin!.check).toMatchObject({ status: 'failed', exitCode: 1 })
    // Three worktrees of their own; the proposal of the built-in agent changed nothing.
    const workspaces = group.attempts.map((attempt) => attempt.workspaceId)
    expect(new Set(workspaces).size).toBe(3)
  }, 360_000)

  it('picks one: the other worktrees and their branches are removed', async () => {
    const [claude, codex, builtin] = group.attempts
    const listed = await runHangar(['workspaces', 'list', '--json'], { env, cwd: shop })
    const paths = new Map(
      (JSON.parse(listed.stdout) as { id: string; path: string }[]).map((workspace) => [
        workspace.id,
        workspace.path,
      ]),
    )
    const picked = await runHangar(['attempts', 'pick', group.id, codex!.conversationId], { env, cwd: shop })
    expect(picked.code, picked.stderr).toBe(0)
    expect(picked.stdout).toMatch(/^\* coder\s+succeeded/m)
    expect(picked.stdout).toMatch(/^claude-code\s+succeeded \(discarded\)/m)
    expect(picked.stderr).toContain(`and branch hangar/${claude!.conversationId}`)
    expect(existsSync(paths.get(codex!.workspaceId!)!)).toBe(true)
    expect(existsSync(path.join(paths.get(codex!.workspaceId!)!, 'notes.txt'))).toBe(true)
    for (const other of [claude!, builtin!]) {
      expect(existsSync(paths.get(other.workspaceId!)!)).toBe(false)
      expect(gitIn(shop, 'branch', '--list', `hangar/${other.conversationId}`)).toBe('')
    }
    const again = await runHangar(['attempts', 'pick', group.id, claude!.conversationId], { env, cwd: shop })
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^hangar: error: attempts atg_\w+ were picked already/)
  }, 120_000)
})
