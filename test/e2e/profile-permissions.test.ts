// Issue 18 item 8: permissions pass through; no privileged mode by default. A profile's `permissions`
// go through the one profile validator from every source: UI/API profiles answer 400 with the key path
// for a bad mode or `cliArgs` that fight Hangar's permission flags (before: no such key, and
// `--permission-mode bypassPermissions` in cliArgs was saved and raced the adapter's own flag), and
// hangar.yaml refuses the same as a config error. `hangar agents` and GET /api/agents say what each
// adapter can enforce (`permissionMode`, no longer a boolean) and its default mode.
import { execFileSync } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { RunningServer } from '../../src/server/listen.js'
import { createApiClient } from '../helpers/api-client.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface Field {
  path: string
  message: string
}
interface ErrorBody {
  error: { code: string; message: string; details: { fields?: Field[] } | null }
}
interface AgentsBody {
  adapters: {
    id: string
    capabilities: { permissionMode: unknown }
    permissions?: { default: string; modes: Record<string, string> }
  }[]
}

describe('profile permissions (issue 18 item 8)', { timeout: 120_000 }, () => {
  let root: string
  let project: string
  let runtime: Runtime
  let server: RunningServer
  let token: string
  const { api } = createApiClient(() => ({ url: server.url, token }))

  beforeAll(async () => {
    root = await makeTempDir('hangar-profile-permissions-')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      projectDir: project,
      config: parseConfig(''),
      env: { PATH: '/usr/bin:/bin', HOME: path.join(root, 'home') },
      logLevel: 'silent',
    })
    server = await runtime.listen({ host: '127.0.0.1', port: 0 })
    token = (await runtime.auth.createToken('system', runtime.owner.id, { name: 'api' })).token
  })

  afterAll(async () => {
    await runtime?.scheduler.stop()
    await server?.close()
    await runtime?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const fieldOf = (body: ErrorBody, key: string) =>
    body.error.details?.fields?.find((field) => field.path === key)

  it('refuses cliArgs that conflict with the permission flags (400 with the key path) and saves nothing', async () => {
    const created = await api<ErrorBody>('POST', '/api/profiles', {
      name: 'risky',
      definition: {
        adapter: 'claude-code',
        cliArgs: ['--add-dir', '/x', '--permission-mode', 'bypassPermissions'],
      },
    })
    expect(created.status, JSON.stringify(created.json)).toBe(400)
    expect(created.json.error.code).toBe('invalid_request')
    expect(fieldOf(created.json, 'definition.cliArgs[2]')?.message).toMatch(/use permissions:/)
    expect(created.json.error.message).toContain('--permission-mode')
    expect((await api('GET', '/api/profiles/risky')).status).toBe(404)

    const cursor = await api<ErrorBody>('POST', '/api/profiles', {
      name: 'forced',
      definition: { adapter: 'cursor-agent', cliArgs: ['--force'] },
    })
    expect(cursor.status).toBe(400)
    expect(fieldOf(cursor.json, 'definition.cliArgs[0]')?.message).toMatch(/use permissions:/)
  })

  it('refuses an unknown mode and tool lists an adapter cannot carry, by key path', async () => {
    const badMode = await api<ErrorBody>('POST', '/api/profiles', {
      name: 'odd',
      definition: { adapter: 'gemini', permissions: { mode: 'yolo' } },
    })
    expect(badMode.status).toBe(400)
    expect(fieldOf(badMode.json, 'definition.permissions.mode')?.message).toMatch(
      /strict.*workspace.*permissive/,
    )

    const lists = await api<ErrorBody>('PUT', '/api/profiles/odd', {
      adapter: 'codex',
      permissions: { mode: 'strict', allowedTools: ['shell'] },
    })
    expect(lists.status).toBe(400)
    expect(fieldOf(lists.json, 'permissions.allowedTools')?.message).toMatch(/no per-tool permissions/)
  })

  it('saves permissions and gives them back', async () => {
    const definition = {
      adapter: 'claude-code',
      permissions: { mode: 'strict', allowedTools: ['Edit'], deniedTools: ['Bash(rm *)'] },
    }
    const created = await api<{ name: string }>('POST', '/api/profiles', { name: 'careful', definition })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const shown = await api<{ definition: { permissions?: unknown } }>('GET', '/api/profiles/careful')
    expect(shown.json.definition.permissions).toEqual(definition.permissions)
  })

  it('reports what each adapter can enforce and its default mode in GET /api/agents', async () => {
    const agents = await api<AgentsBody>('GET', '/api/agents')
    expect(agents.json.adapters.map((adapter) => adapter.id)).toContain('builtin')
    for (const adapter of agents.json.adapters) {
      expect(['strict', 'permissive', 'none']).toContain(adapter.capabilities.permissionMode)
      expect(adapter.permissions?.default, adapter.id).toBe('workspace')
    }
    const cursor = agents.json.adapters.find((adapter) => adapter.id === 'cursor-agent')
    expect(cursor?.permissions?.modes.permissive).toBe('--force')
    expect(cursor?.permissions?.modes.workspace).not.toMatch(/^--force/)
  })

  it('refuses conflicting cliArgs in hangar.yaml as a config error naming the key path', async () => {
    const yamlProject = path.join(root, 'yaml-project')
    await mkdir(yamlProject)
    await writeFile(
      path.join(yamlProject, 'hangar.yaml'),
      ['agents:', '  reviewer:', '    adapter: copilot', '    cliArgs: ["--allow-all-tools"]', ''].join('\n'),
    )
    const result = await runHangar(['agents', '--data-dir', path.join(root, 'yaml-data')], {
      env: cleanEnv({ HOME: path.join(root, 'home') }),
      cwd: yamlProject,
    })
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toMatch(/hangar\.yaml:4:\d+: agents\.reviewer\.cliArgs\[0\]: .*use permissions:/)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it('prints each adapter default permission mode in `hangar agents`', async () => {
    const env = cleanEnv({ HOME: path.join(root, 'home'), PATH: '/usr/bin:/bin' })
    const dataDir = path.join(root, 'agents-data')
    const text = await runHangar(['agents', '--refresh', '--data-dir', dataDir], { env, cwd: project })
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(
      /claude-code[^\n]*\n\s+permissions: workspace by default \(--permission-mode acceptEdits/,
    )
    expect(text.stdout).toMatch(/cursor-agent[^\n]*\n\s+permissions: workspace by default \(no --force/)
    const json = JSON.parse(
      (await runHangar(['agents', '--json', '--data-dir', dataDir], { env, cwd: project })).stdout,
    ) as AgentsBody['adapters']
    expect(json.find((adapter) => adapter.id === 'codex')).toMatchObject({
      capabilities: { permissionMode: 'strict' },
      permissions: { default: 'workspace' },
    })
  })
})
