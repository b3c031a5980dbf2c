// Test-only: a runtime in this process listening on a loopback port (the REST API and MCP of `hangar up`,
// without its scheduler), on one store engine, in a temp root with a git project; PATs for its users.
import { execFileSync } from 'node:child_process'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { createApiClient } from './api-client.js'
import { cleanEnv } from './hangar-cli.js'
import { freshPostgresUrl, makeTempDir, type StoreEngine } from './store-engines.js'

export interface InProcessDaemon {
  runtime: Runtime
  url: string
  root: string
  dataDir: string
  /** The store's URL ('' = SQLite in dataDir), for another runtime sharing it. */
  databaseUrl: string
  /** The daemon's own directory: a git repository with one commit. */
  daemonDir: string
  /** A PAT of the user (api scope). */
  tokenFor(user: User): Promise<string>
  api: ReturnType<typeof createApiClient>['api']
  close(): Promise<void>
}

/** `git init` and one empty commit. */
export function gitRepo(dir: string): void {
  execFileSync('git', ['init', '-q'], { cwd: dir })
  execFileSync(
    'git',
    ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init'],
    {
      cwd: dir,
    },
  )
}

export interface InProcessDaemonOptions {
  /** hangar.yaml text (default: none). */
  configText?: string
  /** Added to the daemon's clean environment. */
  env?: NodeJS.ProcessEnv
}

export async function startInProcessDaemon(
  engine: StoreEngine,
  prefix: string,
  options: InProcessDaemonOptions = {},
): Promise<InProcessDaemon> {
  const root = await makeTempDir(prefix)
  const dataDir = path.join(root, 'data')
  const daemonDir = path.join(root, 'daemon-dir')
  await mkdir(daemonDir)
  gitRepo(daemonDir)
  const databaseUrl = engine.name === 'postgres' ? await freshPostgresUrl({ migrated: true }) : ''
  const runtime = await createRuntime({
    dataDir,
    databaseUrl: databaseUrl || undefined,
    config: parseConfig(options.configText ?? ''),
    projectDir: daemonDir,
    env: cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      ...options.env,
    }),
    logLevel: 'silent',
  })
  const server = await runtime.listen({ host: '127.0.0.1', port: 0 })
  const ownerToken = await tokenFor(runtime.owner)
  const { api } = createApiClient(() => ({ url: server.url, token: ownerToken }))
  async function tokenFor(user: User): Promise<string> {
    return (await runtime.auth.createToken('system', user.id, { name: `test-${user.name}` })).token
  }
  return {
    runtime,
    url: server.url,
    root,
    dataDir,
    databaseUrl,
    daemonDir,
    tokenFor,
    api,
    async close() {
      await server.close()
      await runtime.close()
      await rm(root, { recursive: true, force: true })
    },
  }
}
