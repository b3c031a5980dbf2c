// Issue 18 item 6: the built-in agent's provider was the first stored credential with a key, then the
// daemon's environment; a user's choice and the operator's default counted for nothing. One precedence now
// holds for the direct path and the proxy's: profile → the user's default → the operator's default
// (`defaultAgent`'s provider, else the first of `providers:`) → the environment. The user's default is
// stored (both engines).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { parseConfig, ProfileSchema } from '../core/config.js'
import { createCredentialsService, type CredentialsService } from '../store/credentials-service.js'
import { generateKeyEntry, parseKeyring } from '../store/keyring.js'
import type { User } from '../store/repositories/users-repository.js'
import { createVault } from '../store/vault.js'
import { chooseBuiltinProvider, resolveBuiltinEndpoint, resolveBuiltinProvider } from './builtin-model.js'

const env = { ANTHROPIC_API_KEY: 'sk-ant-operator-env-key-choice-01' }
const OPERATOR_YAML = [
  'defaultAgent: helper',
  'agents:',
  '  helper:',
  '    adapter: builtin',
  '    provider: lab',
  '    model: lab-large',
  'providers:',
  '  allowPrivateNetworks: true',
  '  gw:',
  '    baseUrl: http://127.0.0.1:9/gw',
  '  lab:',
  '    baseUrl: http://127.0.0.1:9/lab',
].join('\n')

describe('chooseBuiltinProvider: one precedence', () => {
  const profile = ProfileSchema.parse({ adapter: 'builtin', provider: 'openai', model: 'gpt-x' })
  const userDefault = { provider: 'ollama', model: 'llama3.2' }

  it('profile, then the user’s default, then the operator’s, then the environment', () => {
    const config = parseConfig(OPERATOR_YAML)
    const choose = (input: Partial<Parameters<typeof chooseBuiltinProvider>[0]>) =>
      chooseBuiltinProvider({ config, profile: null, userDefault: undefined, env, ...input })
    expect(choose({ profile, profileName: 'rev', userDefault })).toEqual({
      provider: 'openai',
      source: 'profile',
      reason: 'profile rev',
      model: 'gpt-x',
    })
    expect(choose({ userDefault })).toEqual({
      provider: 'ollama',
      source: 'user',
      reason: 'your default',
      model: 'llama3.2',
    })
    expect(choose({})).toEqual({
      provider: 'lab',
      source: 'operator',
      reason: 'operator default (defaultAgent helper in hangar.yaml)',
      model: 'lab-large',
    })
    // Without a built-in defaultAgent: the first configured provider.
    expect(choose({ config: parseConfig('providers:\n  gw:\n    baseUrl: http://127.0.0.1:9/gw') })).toEqual({
      provider: 'gw',
      source: 'operator',
      reason: 'operator default (providers.gw in hangar.yaml)',
      model: undefined,
    })
    expect(choose({ config: parseConfig('') })).toEqual({
      provider: 'anthropic',
      source: 'environment',
      reason: "ANTHROPIC_API_KEY in the daemon's environment",
      model: undefined,
    })
    expect(choose({ config: parseConfig(''), env: {} })).toBeUndefined()
  })
})

describe.each(STORE_ENGINES)('the user’s default for the built-in agent ($name)', (engine) => {
  let testStore: TestStore
  let credentials: CredentialsService
  let member: User

  beforeEach(async () => {
    testStore = await engine.open()
    credentials = createCredentialsService({
      store: testStore.store,
      vaultState: { vault: createVault(parseKeyring(generateKeyEntry('test'))) },
    })
    member = await testStore.store.users.create({ name: 'olga', role: 'member' })
  })
  afterEach(() => testStore.dispose())

  // The user's Ollama is on loopback: the operator allows private networks.
  const input = (yaml = 'providers:\n  allowPrivateNetworks: true') => ({
    config: parseConfig(yaml),
    profile: null,
    env,
    credentials,
    userId: member.id,
  })

  it('is stored per user, wins over the operator’s default and the environment, and can be cleared', async () => {
    // Today's trap: a stored key for another provider no longer decides anything by itself.
    await credentials.put('system', member.id, 'openai', { apiKey: 'sk-openai-member-key-000001' })
    await credentials.put('system', member.id, 'ollama', { baseUrl: 'http://127.0.0.1:11434/v1' })
    expect(await resolveBuiltinProvider(input())).toMatchObject({
      provider: 'anthropic',
      source: 'environment',
    })

    await credentials.setBuiltinDefault('system', member.id, { provider: 'ollama', model: 'llama3.2' })
    expect(await credentials.builtinDefault(member.id)).toMatchObject({
      provider: 'ollama',
      model: 'llama3.2',
    })
    const other = await testStore.store.users.create({ name: 'otto', role: 'member' })
    expect(await credentials.builtinDefault(other.id)).toBeUndefined()

    // Keyless and local: allowed, with no key at all (never the operator's).
    const chosen = await resolveBuiltinProvider(input(OPERATOR_YAML))
    expect(chosen).toEqual({
      provider: 'ollama',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      userSet: true,
      model: 'llama3.2',
      source: 'user',
      reason: 'your default',
    })
    // The proxy's built-in path asks the same function.
    expect(await resolveBuiltinEndpoint(input(OPERATOR_YAML))).toEqual({
      provider: 'ollama',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      userSet: true,
    })
    // A profile naming its provider still wins.
    expect(
      await resolveBuiltinProvider({
        ...input(),
        profile: ProfileSchema.parse({ adapter: 'builtin', provider: 'anthropic' }),
      }),
    ).toMatchObject({ provider: 'anthropic', source: 'profile', model: 'claude-sonnet-4-6' })

    await credentials.setBuiltinDefault('system', member.id, { provider: 'anthropic' })
    expect(await credentials.builtinDefault(member.id)).toMatchObject({ provider: 'anthropic', model: null })
    await credentials.setBuiltinDefault('system', member.id, { provider: null })
    expect(await credentials.builtinDefault(member.id)).toBeUndefined()
    expect(await resolveBuiltinProvider(input(OPERATOR_YAML))).toMatchObject({
      provider: 'lab',
      source: 'operator',
      model: 'lab-large',
    })
  })
})
