// The contracts page lives in the repo (README pointed at ../shared/ARCHITECTURE.md, outside it): its
// hangar.yaml example must be one Hangar accepts, and every route it names must be one the daemon serves.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const contracts = await readFile(path.join(repo, 'docs/CONTRACTS.md'), 'utf8')

describe('docs/CONTRACTS.md', () => {
  it("has a hangar.yaml example that Hangar's config schema accepts", () => {
    const example = /```yaml\n([\s\S]*?)```/.exec(contracts)?.[1]
    expect(example).toBeTruthy()
    const config = parseConfig(example!, 'docs/CONTRACTS.md')
    expect(Object.keys(config.agents)).toEqual(['reviewer', 'helper'])
  })

  it('names only HTTP routes the code registers', async () => {
    const routes = new Set<string>()
    const sources = ['src/server/routes', 'src/server/mcp', 'src/server']
    for (const directory of sources) {
      for (const file of await readdir(path.join(repo, directory))) {
        if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue
        const text = await readFile(path.join(repo, directory, file), 'utf8')
        for (const match of text.matchAll(/app\.(?:get|post|put|delete)\(\s*[`']([^`']+)[`']/g))
          routes.add(match[1]!.replace(/\$\{kind\}/, ':kind'))
      }
    }
    const named = [
      ...contracts.matchAll(/`(?:(?:GET|POST|PUT|DELETE)(?:\/(?:GET|POST|PUT|DELETE))* )(\/[^`?\s]+)/g),
    ].map((match) => match[1]!)
    expect(named.length).toBeGreaterThan(20)
    for (const route of named) {
      // `/api/runs/:id/cancel|finalize|resume` names three routes.
      const [head, ...alternatives] = route.split('|')
      const base = head!.slice(0, head!.lastIndexOf('/') + 1)
      for (const one of [head!, ...alternatives.map((tail) => base + tail)]) {
        const known = routes.has(one) || routes.has(one.replace(/\/(confirm|reject)$/, '/:kind'))
        expect(known, `${one} is in CONTRACTS.md but no route registers it`).toBe(true)
      }
    }
  })
})
