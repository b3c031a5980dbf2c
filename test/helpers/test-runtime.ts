// Test-only: the Hono app wired as createRuntime wires it, on an empty store of one engine, with a fresh
// vault (or a vault state a test chooses) and helpers to sign in and read error envelopes.
import { expect } from 'vitest'
import type { ErrorCode } from '../../src/core/errors.js'
import type { Clock } from '../../src/core/ids.js'
import { silentLogger } from '../../src/core/logger.js'
import { createServerApp } from '../../src/server/app.js'
import type { AuthRateLimiterOptions } from '../../src/server/auth-rate-limiter.js'
import type { HttpPosture } from '../../src/server/http-posture.js'
import { SESSION_COOKIE } from '../../src/server/auth-middleware.js'
import type { ErrorEnvelope } from '../../src/server/error-envelope.js'
import { type AuthService, createAuthService } from '../../src/store/auth-service.js'
import {
  type CredentialsService,
  createCredentialsService,
  type VaultState,
} from '../../src/store/credentials-service.js'
import { generateKeyEntry, parseKeyring } from '../../src/store/keyring.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import type { Store } from '../../src/store/store.js'
import { createVault } from '../../src/store/vault.js'
import { STORE_ENGINES, type StoreEngine, type TestStore } from './store-engines.js'

export const TEST_INFO = { version: '0.0.0-test', nodeId: 'test-node', startedAt: new Date() }

export interface TestApp {
  app: ReturnType<typeof createServerApp>
  testStore: TestStore
  store: Store
  auth: AuthService
  credentials: CredentialsService
  /** The instance owner, created like createRuntime does on a first start. */
  owner: User
  /** Signs `user` in through a one-time link, as the login page does; returns a Cookie header value. */
  signIn(user?: User): Promise<string>
  /** A PAT minted directly by the auth service (not over HTTP). */
  createPat(
    user?: User,
    input?: { name?: string; expiresInMs?: number; kind?: 'user' | 'proxy' },
  ): Promise<string>
  dispose(): Promise<void>
}

export interface TestAppOptions {
  allowPrivateNetworks?: boolean
  /** Default: SQLite. */
  engine?: StoreEngine
  clock?: Clock
  /** Default: a vault with one fresh key. */
  vaultState?: VaultState
  /** Default: a loopback bind with no reverse proxy in front. */
  posture?: HttpPosture
  /** Default: the app's own limit, on `clock` when one is given. */
  authRateLimit?: AuthRateLimiterOptions
  /** A built web UI to serve; default none (the API alone). */
  webRoot?: string
}

export async function openTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const engine = options.engine ?? STORE_ENGINES[0]!
  const testStore = await engine.open(options.clock ? { clock: options.clock } : {})
  const { store } = testStore
  const auth = createAuthService({ store, ...(options.clock && { clock: options.clock }) })
  const vaultState = options.vaultState ?? { vault: createVault(parseKeyring(generateKeyEntry('test'))) }
  const credentials = createCredentialsService({ store, vaultState })
  const owner = await store.users.create({ name: 'owner', role: 'owner' })
  const app = createServerApp({
    store,
    auth,
    credentials,
    log: silentLogger,
    info: TEST_INFO,
    policy: { allowPrivateNetworks: options.allowPrivateNetworks ?? true },
    // The API alone: whether dist/web was built must not change what these tests see.
    webRoot: options.webRoot ?? null,
    ...(options.posture && { posture: options.posture }),
    authRateLimit: { ...(options.clock && { clock: options.clock }), ...options.authRateLimit },
  })

  return {
    app,
    testStore,
    store,
    auth,
    credentials,
    owner,
    async signIn(user = owner) {
      const link = await auth.createLoginLink(user.id)
      const response = await app.request('http://localhost/api/login', jsonInit('POST', { token: link }))
      expect(response.status).toBe(200)
      return sessionCookieOf(response)
    },
    async createPat(user = owner, input = {}) {
      const { token } = await auth.createToken('system', user.id, {
        name: input.name ?? 'test',
        ...(input.expiresInMs !== undefined && { expiresInMs: input.expiresInMs }),
        ...(input.kind && { kind: input.kind, profile: input.kind === 'proxy' ? 'reviewer' : null }),
      })
      return token
    },
    dispose: () => testStore.dispose(),
  }
}

/** A RequestInit with a JSON body (a string is sent as it is, so tests can send broken JSON). */
export function jsonInit(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  }
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` }
}

/** `hangar_session=<value>` from a response's Set-Cookie, ready for a Cookie header. */
export function sessionCookieOf(response: Response): string {
  const setCookie = response.headers.get('set-cookie') ?? ''
  const match = new RegExp(`^${SESSION_COOKIE}=([^;]+)`).exec(setCookie)
  if (!match) throw new Error(`no ${SESSION_COOKIE} cookie in "${setCookie}"`)
  return `${SESSION_COOKIE}=${match[1]}`
}

/** Checks the status and JSON content type, and returns the body for an exact `toEqual`. */
export async function errorEnvelopeOf(response: Response, status: number): Promise<ErrorEnvelope> {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  return (await response.json()) as ErrorEnvelope
}

/** The whole envelope for an error without details; `message` may be a matcher. */
export function envelope(code: ErrorCode, message: unknown, details: unknown = null): ErrorEnvelope {
  return { error: { code, message, retryable: false, details } } as ErrorEnvelope
}
