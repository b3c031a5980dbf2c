#!/usr/bin/env node
// The daemon's build. tsc compiles src/ to dist/src (type-checked ES modules, one per source file: what the
// bench scripts and tools import piece by piece); then the `hangar` CLI is bundled from that output into
// dist/bin, the entry point package.json names. Loading some 740 separate modules (Kysely alone is 260)
// was half of `hangar up`'s start-up, and every CLI command paid it: 960 ms to listening, against 476 ms
// bundled. What is loaded only on first use stays apart, in chunks of its own that are named for what they
// hold (the start-up test checks that none of them loads before it is needed). Packages loaded through
// createRequire at run time (better-sqlite3 with its native addon, pg, web-push) are not bundled.
//
// Usage: node scripts/build-daemon.mjs   (npm run build runs it through build-if-changed.mjs)
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'rolldown'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const BUNDLE_DIR = 'dist/bin'

/**
 * The chunks loaded on first use, by name (the start-up test looks for these names), each with the
 * packages it needs. zod, which the MCP SDK needs and the daemon also imports at start, is a chunk of its
 * own, taken first: otherwise the MCP SDK's chunk would take it along, and load with the daemon.
 */
export const LAZY_CHUNKS = [
  { name: 'anthropic-sdk', test: /[\\/]node_modules[\\/]@anthropic-ai[\\/]sdk[\\/]/ },
  { name: 'mcp-sdk', test: /[\\/]node_modules[\\/]@modelcontextprotocol[\\/]sdk[\\/]/ },
]
const SHARED_CHUNKS = [{ name: 'zod', test: /[\\/]node_modules[\\/]zod[\\/]/ }]

execFileSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
})
rmSync(path.join(root, BUNDLE_DIR), { recursive: true, force: true })
await build({
  cwd: root,
  input: 'dist/src/bin/hangar.js',
  platform: 'node',
  logLevel: 'warn',
  output: {
    dir: BUNDLE_DIR,
    format: 'esm',
    entryFileNames: 'hangar.js',
    chunkFileNames: '[name]-[hash].js',
    codeSplitting: { groups: [...SHARED_CHUNKS, ...LAZY_CHUNKS] },
  },
})
