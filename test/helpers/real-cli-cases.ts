// The six real agent CLIs as the e2e suites drive them: which adapter, which wire family the mock model
// speaks to it, a model slug it knows, and how long one run may take. Plus an environment that lets
// nothing but loopback through: a refusing proxy on 127.0.0.1 records any attempt to go elsewhere.
import { mkdir, mkdtemp } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { claudeCodeAdapter } from '../../src/adapters/defs/claude-code.js'
import { codexAdapter } from '../../src/adapters/defs/codex.js'
import { copilotAdapter, resolveCopilotExecutable } from '../../src/adapters/defs/copilot.js'
import { geminiAdapter } from '../../src/adapters/defs/gemini.js'
import { openclawAdapter, resolveOpenclawExecutable } from '../../src/adapters/defs/openclaw.js'
import { opencodeAdapter } from '../../src/adapters/defs/opencode.js'
import type { AdapterDef, ModelFamily, ResolvedExecutable } from '../../src/adapters/types.js'
import { node24Binary, openclawScript, testCliBin, testClisDir } from './test-clis.js'

export const TEST_API_KEY = 'sk-test-hangar-0123456789'

export interface RealCliCase {
  /** Recording prefix. */
  name: string
  adapter: AdapterDef
  family: ModelFamily
  model?: string
  /** Seconds a single run may take. */
  runTimeout: number
  resolve(): Promise<ResolvedExecutable>
  env?: Record<string, string>
}

export const REAL_CLI_CASES: RealCliCase[] = [
  {
    name: 'claude',
    adapter: claudeCodeAdapter,
    family: 'anthropic',
    runTimeout: 60,
    resolve: async () => ({ path: testCliBin('claude') }),
    // The default of ten retries with backoff makes a 401 take minutes.
    env: { CLAUDE_CODE_MAX_RETRIES: '1' },
  },
  {
    name: 'codex',
    adapter: codexAdapter,
    family: 'openai-responses',
    // A slug Codex knows: unknown ones get no apply_patch tool.
    model: 'gpt-5.5',
    runTimeout: 60,
    resolve: async () => ({ path: testCliBin('codex') }),
  },
  {
    name: 'gemini',
    adapter: geminiAdapter,
    family: 'gemini',
    runTimeout: 60,
    resolve: async () => ({ path: testCliBin('gemini') }),
  },
  {
    name: 'opencode',
    adapter: opencodeAdapter,
    family: 'openai-chat',
    model: 'mock-model',
    runTimeout: 90,
    resolve: async () => ({ path: testCliBin('opencode') }),
  },
  {
    name: 'copilot',
    adapter: copilotAdapter,
    family: 'openai-chat',
    model: 'gpt-5.4',
    runTimeout: 90,
    resolve: () => resolveCopilotExecutable(testCliBin('copilot')),
  },
  {
    name: 'openclaw',
    adapter: openclawAdapter,
    family: 'anthropic',
    model: 'claude-mock',
    runTimeout: 150,
    // OpenClaw caches V8's compilation of its modules, in the home by default (a fresh one per test
    // suite, so cold every time: 9 of a 30 s turn here). One cache beside the pinned install, as a user's
    // own home keeps one; the adapter leaves a NODE_COMPILE_CACHE it is given as it is.
    get env() {
      return { NODE_COMPILE_CACHE: path.join(testClisDir(), 'openclaw', 'node-compile-cache') }
    },
    resolve: () => resolveOpenclawExecutable(openclawScript(), { HANGAR_NODE24: node24Binary(), PATH: '' }),
  },
]

/** PATH entries holding the real CLIs (and the Node 24 OpenClaw needs). */
export function testCliPath(): string[] {
  const root = testClisDir()
  return [
    path.join(root, 'main', 'node_modules', '.bin'),
    path.join(root, 'openclaw', 'node_modules', '.bin'),
  ]
}

/** A PATH for a process that runs the real CLIs: theirs first, then this Node and the system's tools. */
export function realCliPath(): string {
  return [...testCliPath(), path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':')
}

/** A proxy that refuses everything and remembers what was asked: any entry is an attempt to leave loopback. */
export async function startRefusingProxy(): Promise<{
  url: string
  attempts: string[]
  close(): Promise<void>
}> {
  const attempts: string[] = []
  const server: Server = createServer((socket) => {
    socket.once('data', (chunk: Buffer) => {
      attempts.push(chunk.toString('latin1').split('\r\n')[0] ?? '')
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** Proxy variables that send every non-loopback request to the refusing proxy. */
export function loopbackOnlyEnv(proxyUrl: string): Record<string, string> {
  return {
    HTTPS_PROXY: proxyUrl,
    HTTP_PROXY: proxyUrl,
    https_proxy: proxyUrl,
    http_proxy: proxyUrl,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  }
}

export function endpointUrl(family: ModelFamily, mockUrl: string): string {
  return family === 'openai-chat' || family === 'openai-responses' ? `${mockUrl}/v1` : mockUrl
}

/**
 * A private scratch root for a suite. Not under /tmp: Gemini ignores a settings file with a group- or
 * world-writable folder above it.
 */
export async function privateScratchRoot(name: string): Promise<string> {
  const base = path.join(os.homedir(), '.cache', 'hangar', 'e2e-runs')
  await mkdir(base, { recursive: true, mode: 0o700 })
  return mkdtemp(path.join(base, `${name}-`))
}

export async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return true
}
