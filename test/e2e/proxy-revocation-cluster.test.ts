// Two runtimes on one PostgreSQL, each serving the proxy and holding proxy tokens in memory: a token
// revoked on one — by hand, or by the end of its run — is refused by the other, which had it cached,
// through the revocation's NOTIFY (a cached token is otherwise trusted for a minute). Every probe is
// refused before anything goes upstream (a body in a coding the proxy does not read: 415 while the token
// holds, 401 once it is revoked).
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import { freshPostgresUrl } from '../helpers/store-engines.js'

describe('proxy-token revocation across two daemons on one PostgreSQL', () => {
  let root: string
  const nodes: { runtime: Runtime; proxy: { url: string; close(): Promise<void> } }[] = []

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-revoke-cluster-'))
    await mkdir(path.join(root, 'project'))
    const databaseUrl = await freshPostgresUrl({ migrated: true })
    for (const name of ['a', 'b']) {
      const runtime = await createRuntime({
        dataDir: path.join(root, `data-${name}`),
        databaseUrl,
        nodeId: name,
        config: parseConfig('agents:\n  reviewer: { adapter: claude-code }\n')!,
        projectDir: path.join(root, 'project'),
        // Upstream is never reached: every probe is refused first.
        env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', ANTHROPIC_API_KEY: 'sk-ant-test-key' },
        logLevel: 'silent',
      })
      nodes.push({ runtime, proxy: await runtime.serveProxy() })
    }
  })
  afterAll(async () => {
    for (const { runtime, proxy } of nodes) {
      await proxy.close()
      await runtime.close()
    }
    if (root) await rm(root, { recursive: true, force: true })
  })

  /** A probe of `token` on a node: 415 while the token holds, 401 once refused. */
  const probe = async (node: (typeof nodes)[number], token: string) =>
    (
      await fetch(`${node.proxy.url}/proxy/${token}/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'compress' },
        body: 'x',
      })
    ).status

  async function refusedOn(node: (typeof nodes)[number], token: string): Promise<void> {
    const deadline = Date.now() + 30_000
    while ((await probe(node, token)) !== 401) {
      if (Date.now() > deadline) throw new Error('the other daemon still accepts the revoked token')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  it('a token revoked on one daemon is refused by the other', async () => {
    const [a, b] = [nodes[0]!, nodes[1]!]
    const ownerId = a.runtime.owner.id
    const { id, token } = await a.runtime.modelProxy.mintForProfile('system', ownerId, 'reviewer')
    expect(await probe(b, token)).toBe(415)
    expect(await probe(a, token)).toBe(415)
    await a.runtime.auth.revokeToken('system', ownerId, id)
    expect(await probe(a, token)).toBe(401)
    await refusedOn(b, token)
  })

  it("a run's token is refused by the other daemon once the run ends", async () => {
    const [a, b] = [nodes[0]!, nodes[1]!]
    const ownerId = a.runtime.owner.id
    const run = await a.runtime.store
      .forUser(ownerId)
      .runs.create({ agent: 'reviewer', adapter: 'claude-code', prompt: 'p', cwd: root })
    const route = await a.runtime.modelProxy.routeBuiltin(ownerId, run.id, 'reviewer', null)
    const token = /\/proxy\/([^/]+)\//.exec(route!.baseUrlFor('anthropic'))![1]!
    expect(await probe(b, token)).toBe(415)
    await a.runtime.modelProxy.closeRun(ownerId, run.id)
    expect(await probe(a, token)).toBe(401)
    await refusedOn(b, token)
  })
})
