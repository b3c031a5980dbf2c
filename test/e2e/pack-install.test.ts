// The package installs like real software: `npm pack`, then `npm install -g` of the tarball into a scratch
// prefix, gives a working `hangar` (version, daemon, web UI) with only the runtime dependencies installed.
// Nothing leaves the machine: npm installs from a loopback registry serving the locked runtime packages out
// of npm's cache, and better-sqlite3's install script finds its native binary as a "local prebuild" (the one
// `npm ci` built for this very Node), so it neither downloads one nor compiles.
import { execFile } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanEnv, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { startLockfileRegistry, type LockfileRegistry } from '../helpers/lockfile-registry.js'
import { makeTempDir } from '../helpers/store-engines.js'

const run = promisify(execFile)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  version: string
  dependencies: Record<string, string>
}

interface PackResult {
  filename: string
  size: number
  files: { path: string }[]
}

/** The better-sqlite3 binary this Node already has, as the prebuild tarball prebuild-install looks for. */
async function localPrebuilds(scratch: string): Promise<string> {
  const module = path.join(root, 'node_modules', 'better-sqlite3')
  const { version } = JSON.parse(readFileSync(path.join(module, 'package.json'), 'utf8')) as {
    version: string
  }
  const directory = path.join(scratch, 'prebuilds')
  mkdirSync(directory)
  const file = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  await run('tar', ['-czf', path.join(directory, file), '-C', module, 'build/Release/better_sqlite3.node'])
  return directory
}

/** Every package a built file imports (bare specifiers: "zod", "hono/cookie", "@scope/name/sub.js"). */
function importedPackages(directory: string): Set<string> {
  const packages = new Set<string>()
  // Static imports and re-exports (tsc ends each with a semicolon), side-effect imports, dynamic imports.
  const specifier =
    /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([@a-z][^'"\s]*)['"]|^\s*import\s*['"]([@a-z][^'"\s]*)['"]|\bimport\(\s*['"]([@a-z][^'"\s]*)['"]\s*\)/gm
  for (const entry of readdirSync(directory, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.js')) continue
    for (const match of readFileSync(path.join(directory, entry), 'utf8').matchAll(specifier)) {
      const imported = (match[1] ?? match[2] ?? match[3])!
      const parts = imported.split('/')
      packages.add(imported.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!)
    }
  }
  return packages
}

/** Packages that locked runtime packages name as optional peer dependencies. */
function optionalPeers(): Set<string> {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { peerDependenciesMeta?: Record<string, { optional?: boolean }> }>
  }
  const names = new Set<string>()
  for (const entry of Object.values(lock.packages))
    for (const [name, meta] of Object.entries(entry.peerDependenciesMeta ?? {}))
      if (meta.optional) names.add(name)
  return names
}

describe('npm pack + npm install -g', () => {
  let scratch: string
  let registry: LockfileRegistry
  let pack: PackResult
  let prefix: string
  let installSeconds = 0

  beforeAll(async () => {
    scratch = await makeTempDir('hangar-pack-')
    // dist/ is already built (npm test builds first): pack it as it is, without rebuilding under other tests.
    const packed = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch, '--loglevel=error'],
      { cwd: root, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
    )
    pack = (JSON.parse(packed.stdout) as PackResult[])[0]!
    registry = await startLockfileRegistry(path.join(root, 'package-lock.json'))
    prefix = path.join(scratch, 'prefix')
    // prebuild-install reads its settings from a .prebuild-installrc in a parent of the package it installs
    // (npm passes no unknown npm_config_* variable on to install scripts).
    writeFileSync(
      path.join(scratch, '.prebuild-installrc'),
      `local-prebuilds=${await localPrebuilds(scratch)}\n`,
    )
    const started = Date.now()
    await run(
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        '--registry',
        registry.url,
        '--cache',
        path.join(scratch, 'npm-cache'),
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        '--logs-dir',
        path.join(scratch, 'npm-logs'),
        path.join(scratch, pack.filename),
      ],
      {
        cwd: scratch,
        timeout: 240_000,
        env: { ...cleanEnv(), npm_config_update_notifier: 'false' },
      },
    )
    installSeconds = (Date.now() - started) / 1000
  }, 300_000)

  afterAll(async () => {
    await registry?.close()
    if (pack) {
      const size = statSync(path.join(scratch, pack.filename)).size
      rmSync(scratch, { recursive: true, force: true })
      console.info(
        `pack-install: ${pack.filename} ${(size / 1024).toFixed(0)} KiB, npm install -g ${installSeconds.toFixed(1)} s`,
      )
    }
  })

  it('packs the built CLI and web UI, and no sources, tests or tooling', () => {
    const files = pack.files.map((file) => file.path)
    expect(files).toContain('package.json')
    expect(files).toContain('README.md')
    expect(files).toContain('dist/bin/hangar.js')
    expect(files).toContain('dist/web/index.html')
    expect(
      files.filter((file) => !/^(dist\/(bin|web)\/|package\.json$|README\.md$|LICENSE$)/.test(file)),
    ).toEqual([])
    expect(files.filter((file) => /\.test\.js$|\.ts$/.test(file) && !file.endsWith('.d.ts'))).toEqual([])
  })

  it('installs only the runtime dependencies, which cover everything the built code imports', () => {
    // npm looks up optional peer dependencies that nothing installs (e.g. pg-native): those may miss.
    expect(registry.misses.filter((name) => !optionalPeers().has(name))).toEqual([])
    expect(installSeconds).toBeGreaterThan(0)
    const installed = path.join(prefix, 'lib', 'node_modules', 'hangar')
    const declared = new Set(Object.keys(manifest.dependencies))
    const builtins = new Set(builtinModules)
    const undeclared = [...importedPackages(path.join(installed, 'dist', 'bin'))].filter(
      (name) => !name.startsWith('node:') && !builtins.has(name) && !declared.has(name),
    )
    expect(undeclared).toEqual([])
    // better-sqlite3 took the local prebuild: neither downloaded nor compiled.
    const binary = 'better-sqlite3/build/Release/better_sqlite3.node'
    expect(
      readFileSync(path.join(installed, 'node_modules', binary)).equals(
        readFileSync(path.join(root, 'node_modules', binary)),
      ),
    ).toBe(true)
    const nodeModules = readdirSync(path.join(installed, 'node_modules'))
    for (const devOnly of ['vite', 'vitest', 'typescript', 'react', 'eslint', 'playwright-core'])
      expect(nodeModules).not.toContain(devOnly)
  })

  it('runs `hangar --version` and `hangar up` serving the web UI and /api/health', async () => {
    const bin = path.join(prefix, 'bin', 'hangar')
    const elsewhere = await makeTempDir('hangar-pack-cwd-')
    const dataDir = await makeTempDir('hangar-pack-data-')
    const env = cleanEnv({ HOME: elsewhere })
    const version = await runHangarAt(bin, ['--version'], elsewhere, env)
    expect(version.trim()).toBe(manifest.version)

    const daemon = await startDaemon(['--data-dir', dataDir], {
      bin,
      cwd: elsewhere,
      env,
      timeoutMs: 60_000,
    })
    try {
      // The last startup line: from here on SIGTERM stops the daemon cleanly.
      await waitForOutput(daemon.stdout, '(detected just now)', 60_000)
      const page = await fetch(`${daemon.url}/`)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toContain('text/html')
      const html = await page.text()
      const script = /<script[^>]+src="([^"]+\.js)"/.exec(html)
      expect(script, html).not.toBeNull()
      const asset = await fetch(new URL(script![1]!, `${daemon.url}/`))
      expect(asset.status).toBe(200)
      const health = await fetch(`${daemon.url}/api/health`)
      expect(health.status).toBe(200)
      expect(await health.json()).toMatchObject({ status: 'ok' })
    } finally {
      const code = await daemon.stop()
      expect(code, `${daemon.stdout()}\n${daemon.stderr()}`).toBe(0)
    }
  }, 120_000)
})

async function runHangarAt(
  bin: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const { stdout } = await run(bin, args, { cwd, env, timeout: 60_000 })
  return stdout
}
