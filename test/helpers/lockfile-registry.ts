// A package registry on loopback that serves exactly the runtime packages of package-lock.json, with their
// tarballs read from npm's own cache (content-addressed by the lockfile's integrity: `npm ci` put every one
// there). Lets a test `npm install -g` the packed tarball with nothing leaving the machine, and with the
// locked versions only: a package npm would want that is not a locked runtime dependency is a 404.
import { createReadStream, existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'

interface LockEntry {
  name?: string
  version?: string
  integrity?: string
  dev?: boolean
  link?: boolean
  [field: string]: unknown
}

// The lockfile fields npm reads from a packument's version entry when it builds the tree.
const MANIFEST_FIELDS = [
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
  'os',
  'cpu',
  'libc',
  'license',
  'deprecated',
] as const

export interface LockfileRegistry {
  url: string
  /** Packuments asked for that the lockfile has no runtime entry for (npm then fails with a 404). */
  misses: string[]
  close(): Promise<void>
}

/** Where npm's cache keeps a tarball with the given integrity ("sha512-<base64>"). */
function cachedTarball(npmCache: string, integrity: string): string {
  const [algorithm, digest] = integrity.split(' ')[0]!.split('-', 2) as [string, string]
  const hex = Buffer.from(digest, 'base64').toString('hex')
  return path.join(
    npmCache,
    '_cacache',
    'content-v2',
    algorithm,
    hex.slice(0, 2),
    hex.slice(2, 4),
    hex.slice(4),
  )
}

function packageName(lockPath: string, entry: LockEntry): string {
  return entry.name ?? lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length)
}

function installedScripts(lockfile: string, lockPath: string): unknown {
  const installed = path.join(path.dirname(lockfile), lockPath, 'package.json')
  return (JSON.parse(readFileSync(installed, 'utf8')) as { scripts?: unknown }).scripts
}

export async function startLockfileRegistry(
  lockfile: string,
  npmCache: string = process.env.npm_config_cache ?? path.join(os.homedir(), '.npm'),
): Promise<LockfileRegistry> {
  const lock = JSON.parse(readFileSync(lockfile, 'utf8')) as { packages: Record<string, LockEntry> }
  const versionsByName = new Map<string, Map<string, LockEntry>>()
  const tarballs = new Map<string, string>()
  const missing: string[] = []
  const lockPathOf = new Map<LockEntry, string>()
  for (const [lockPath, entry] of Object.entries(lock.packages)) {
    if (lockPath === '' || entry.dev === true || entry.link === true || !entry.version || !entry.integrity)
      continue
    const file = cachedTarball(npmCache, entry.integrity)
    if (!existsSync(file)) missing.push(`${lockPath}@${entry.version}`)
    const name = packageName(lockPath, entry)
    lockPathOf.set(entry, lockPath)
    const versions = versionsByName.get(name) ?? new Map<string, LockEntry>()
    versions.set(entry.version, entry)
    versionsByName.set(name, versions)
    tarballs.set(Buffer.from(entry.integrity.split('-', 2)[1]!, 'base64').toString('hex'), file)
  }
  if (missing.length > 0) {
    throw new Error(
      `npm's cache (${npmCache}) lacks the tarballs of ${missing.length} locked packages, e.g. ${missing.slice(0, 3).join(', ')}: run "npm ci" first`,
    )
  }

  const misses: string[] = []
  let base = ''
  const server = createServer((request, response) => {
    const url = decodeURIComponent((request.url ?? '/').split('?')[0]!)
    const tarball = /^\/-\/tarball\/([0-9a-f]+)\.tgz$/.exec(url)
    if (tarball) {
      const file = tarballs.get(tarball[1]!)
      if (file === undefined) return void response.writeHead(404).end()
      response.writeHead(200, { 'content-type': 'application/octet-stream' })
      return void createReadStream(file).pipe(response)
    }
    const name = url.slice(1)
    const versions = versionsByName.get(name)
    if (versions === undefined) {
      misses.push(name)
      return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
    }
    const packument = {
      name,
      'dist-tags': { latest: [...versions.keys()].at(-1) },
      versions: Object.fromEntries(
        [...versions].map(([version, entry]) => {
          const manifest: Record<string, unknown> = { name, version }
          for (const field of MANIFEST_FIELDS) if (entry[field] !== undefined) manifest[field] = entry[field]
          // npm runs the install scripts the packument names (without them it guesses `node-gyp rebuild`);
          // the lockfile has none, the installed package.json next to it does.
          if (entry.hasInstallScript === true)
            manifest.scripts = installedScripts(lockfile, lockPathOf.get(entry)!)
          const hex = Buffer.from(entry.integrity!.split('-', 2)[1]!, 'base64').toString('hex')
          manifest.dist = { tarball: `${base}/-/tarball/${hex}.tgz`, integrity: entry.integrity }
          return [version, manifest]
        }),
      ),
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: `${base}/`,
    misses,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
