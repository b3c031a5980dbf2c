// Issue 17 item 3, the built-in agent's own side: which key goes with which base URL when it picks its
// provider (the proxy's upstream for it, or its direct connection), and the direct connection to a
// user-set base URL checked after DNS. Item 11 (first bug): a provider Hangar does not know, without a
// base URL, is refused by name instead of borrowing another provider's endpoint or key.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { parseConfig, ProfileSchema } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { createCredentialsService, type CredentialsService } from '../store/credentials-service.js'
import { generateKeyEntry, parseKeyring } from '../store/keyring.js'
import type { User } from '../store/repositories/users-repository.js'
import { createVault } from '../store/vault.js'
import { resolveBuiltinModel, resolveBuiltinProvider } from './builtin-model.js'

const OPERATOR_KEY = 'sk-ant-operator-env-key-builtin-01'
const MEMBER_KEY = 'sk-ant-member-own-key-builtin-0002'

describe.each(STORE_ENGINES)('builtin-model ($name)', (engine) => {
  let testStore: TestStore
  let credentials: CredentialsService
  let member: User
  let server: Server
  let port: number
  const hits: { url: string; key: string | undefined }[] = []

  beforeAll(async () => {
    server = createServer((req, res) => {
      // The SDK sends the key as `x-api-key` or as a bearer token, depending on its version.
      const key =
        (req.headers['x-api-key'] as string | undefined) ?? req.headers.authorization?.replace(/^Bearer /, '')
      hits.push({ url: req.url ?? '', key })
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end('{"type":"error","error":{"type":"api_error","message":"capture"}}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  beforeEach(async () => {
    testStore = await engine.open()
    credentials = createCredentialsService({
      store: testStore.store,
      vaultState: { vault: createVault(parseKeyring(generateKeyEntry('test'))) },
    })
    member = await testStore.store.users.create({ name: 'mallory', role: 'member' })
    hits.length = 0
  })
  afterEach(() => testStore.dispose())

  const env = { ANTHROPIC_API_KEY: OPERATOR_KEY, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/operator' }
  const input = (yaml = '') => ({
    config: parseConfig(yaml),
    profile: null,
    env,
    credentials,
    userId: member.id,
  })

  it('gives the operator’s key with the operator’s endpoint, trusted even on loopback', async () => {
    expect(await resolveBuiltinProvider(input())).toEqual({
      provider: 'anthropic',
      baseUrl: 'http://127.0.0.1:9/operator',
      apiKey: OPERATOR_KEY,
      userSet: false,
      model: 'claude-sonnet-4-6',
      source: 'environment',
      reason: "ANTHROPIC_API_KEY in the daemon's environment",
    })
  })

  it('never gives the operator’s key with a base URL the member set; their own key only', async () => {
    await credentials.put('system', member.id, 'anthropic', { baseUrl: 'https://models.example.com' })
    const refused = await resolveBuiltinProvider(input()).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(AppError)
    expect((refused as AppError).message).toBe(
      'no API key for provider "anthropic": the base URL in your provider settings goes only with a key of your own',
    )
    expect(JSON.stringify(refused)).not.toContain(OPERATOR_KEY)
    await credentials.put('system', member.id, 'anthropic', { apiKey: MEMBER_KEY })
    expect(await resolveBuiltinProvider(input())).toMatchObject({
      baseUrl: 'https://models.example.com',
      apiKey: MEMBER_KEY,
      userSet: true,
    })
  })

  it('refuses a provider with no known base URL by name', async () => {
    await credentials.put('system', member.id, 'openai', { apiKey: 'sk-openai-member-000000' })
    const refused = await resolveBuiltinProvider({
      ...input(),
      // As the UI saves it: hangar.yaml would refuse an unknown provider when loaded.
      profile: ProfileSchema.parse({ adapter: 'builtin', provider: 'mylab', model: 'm' }),
    }).catch((error: unknown) => error)
    expect((refused as AppError).message).toBe('the model provider "mylab" has no base URL')
  })

  it('connects directly to a member’s base URL only after checking the resolved address', async () => {
    // A name (not an IP literal, not "localhost") this machine resolves to itself.
    const url = `http://${os.hostname()}:${port}`
    await credentials.put('system', member.id, 'anthropic', { baseUrl: url, apiKey: MEMBER_KEY })
    const strict = await resolveBuiltinModel(input())
    const request = { model: 'claude-sonnet-4-6', system: '', messages: [], tools: [], maxTokens: 10 }
    const drain = async (client: typeof strict.client) => {
      try {
        for await (const event of client.stream(request as never)) void event
      } catch (error) {
        return error as Error
      }
      return undefined
    }
    const refusedError = await drain(strict.client)
    expect(refusedError).toBeInstanceOf(AppError)
    expect(refusedError?.message).toBe(
      `The connection to anthropic was refused: the base URL set for this provider (host ${os.hostname()}) resolves to a loopback or private address, which this daemon does not allow (an operator can allow it with providers.allowPrivateNetworks in hangar.yaml)`,
    )
    expect((refusedError as AppError).retryable).toBe(false)
    expect(hits).toEqual([])
    const open = await resolveBuiltinModel(input('providers:\n  allowPrivateNetworks: true'))
    await drain(open.client)
    expect(hits.length).toBeGreaterThan(0)
    expect(hits.map((hit) => hit.key)).toEqual(hits.map(() => MEMBER_KEY))
  })
})
