import { describe, expect, it } from 'vitest'
import { type ConfigIssue, parseConfig, profileIssues } from './config.js'
import { AppError } from './errors.js'

function issuesOf(text: string): ConfigIssue[] {
  try {
    parseConfig(text, '/p/hangar.yaml')
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).code).toBe('config_invalid')
    return (error as AppError).details?.issues as ConfigIssue[]
  }
  throw new Error('expected a config error')
}

const FULL = `
defaultAgent: reviewer
services:
  market-api: { url: "http://127.0.0.1:8080", auth: { bearerEnv: MARKET_API_TOKEN } }
providers:
  anthropic: { baseUrl: "https://api.anthropic.com", apiKeyEnv: ANTHROPIC_API_KEY }
  ollama: { baseUrl: "http://127.0.0.1:11434/v1" }
  vllm: { baseUrl: "http://127.0.0.1:8000/v1" }
targets:
  buildbox: { ssh: dev@buildbox, dir: /srv/hangar, port: 22, identityFile: ~/.ssh/id_ed25519 }
agents:
  reviewer:
    adapter: claude-code
    model: claude-sonnet-4-6
    skills: [./skills/review]
    feeds:
      - { source: market-api, path: /api/v1/summary, ttl: 300 }
      - { name: alerts, source: market-api, path: "/alerts/{agent}", ttl: 30 }
    target: buildbox
    concurrency: 2
    autoApprove: [safe_create, safe_update]
    budget: { usd: 5, window: 1d }
  local:
    adapter: builtin
    provider: vllm
proxy: { feedTimeoutMs: 2000, openaiPlacement: user }
server: { maxConcurrentRuns: 8 }
`

describe('config', () => {
  it('parses the documented example and fills defaults', () => {
    const config = parseConfig(FULL)
    expect(config.defaultAgent).toBe('reviewer')
    expect(config.agents.reviewer).toMatchObject({
      adapter: 'claude-code',
      concurrency: 2,
      proxy: true,
      cliArgs: [],
    })
    expect(config.agents.local).toMatchObject({ adapter: 'builtin', concurrency: 1, autoApprove: [] })
    expect(config.proxy).toEqual({
      feedTimeoutMs: 2000,
      feedMaxBytes: 32768,
      feedTotalMaxBytes: 65536,
      openaiPlacement: 'user',
      bodyLimitMb: 32,
      upstreamConnectTimeoutMs: 10_000,
      upstreamIdleTimeoutMs: 300_000,
    })
    expect(config.server).toEqual({
      maxConcurrentRuns: 8,
      allowedRoots: [],
      trustProxy: false,
      public: false,
      allowedHosts: [],
      heartbeatMs: 5000,
      leaseMs: 20_000,
    })
  })

  it('treats an empty file as all defaults', () => {
    expect(parseConfig('').agents).toEqual({})
    expect(parseConfig('# only a comment\n').server.maxConcurrentRuns).toBe(4)
  })

  it('names file, line, column and key path of an unknown key, with the allowed keys', () => {
    const issues = issuesOf('agents:\n  reviewer:\n    adapter: codex\n    modle: gpt-5.5\n')
    expect(issues).toHaveLength(1)
    expect(issues[0]).toMatchObject({
      file: '/p/hangar.yaml',
      line: 4,
      column: 5,
      path: 'agents.reviewer.modle',
    })
    expect(issues[0]?.message).toContain('unknown key "modle"')
    expect(issues[0]?.message).toContain('model')
  })

  it('puts the first problem in the message as file:line:column: path: expectation', () => {
    expect(() => parseConfig('agents:\n  r:\n    adapter: claud\n', '/p/hangar.yaml')).toThrow(
      /^\/p\/hangar\.yaml:3:14: agents\.r\.adapter: .*claude-code/,
    )
  })

  it('reports every problem, not just the first', () => {
    const issues = issuesOf(
      'bogus: 1\nserver: { maxConcurrentRuns: 0 }\nagents:\n  x: { adapter: codex, concurrency: "two" }\n',
    )
    expect(issues.map((issue) => issue.path).sort()).toEqual([
      'agents.x.concurrency',
      'bogus',
      'server.maxConcurrentRuns',
    ])
  })

  it('reports YAML syntax errors with their line', () => {
    const issues = issuesOf('agents:\n  reviewer:\n    adapter: [unclosed\n')
    expect(issues[0]?.message).toMatch(/^YAML syntax/)
    expect(issues[0]?.line).toBeGreaterThanOrEqual(3)
  })

  it('rejects duplicate keys', () => {
    expect(issuesOf('server: {}\nserver: {}\n')[0]?.line).toBe(2)
  })

  it('rejects a non-mapping document', () => {
    expect(issuesOf('- a\n- b\n')[0]?.message).toContain('mapping')
  })

  it('checks cross references: feed sources, targets, providers, names and defaultAgent', () => {
    const issues = issuesOf(
      [
        'defaultAgent: nobody',
        'providers:',
        '  mystery: { apiKeyEnv: KEY }',
        'agents:',
        '  codex: { adapter: codex }',
        '  a:',
        '    adapter: gemini',
        '    provider: anthropic',
        '    target: nowhere',
        '    feeds: [{ source: missing, path: /x, ttl: 5 }]',
        '  b: { adapter: builtin, provider: unknown-one }',
        '  c: { adapter: builtin, target: nowhere }',
      ].join('\n'),
    )
    const byPath = Object.fromEntries(issues.map((issue) => [issue.path, issue]))
    expect(byPath.defaultAgent?.message).toContain('unknown agent "nobody"')
    expect(byPath['providers.mystery']?.message).toContain('baseUrl')
    expect(byPath['agents.codex']?.message).toContain('may not be named like an adapter')
    expect(byPath['agents.a.provider']?.message).toContain('only to the builtin adapter')
    expect(byPath['agents.a.target']?.message).toContain('unknown target "nowhere"')
    expect(byPath['agents.a.feeds[0].source']).toMatchObject({ line: 10 })
    expect(byPath['agents.a.feeds[0].source']?.message).toContain('unknown source "missing"')
    expect(byPath['agents.b.provider']?.message).toContain('unknown provider "unknown-one"')
    expect(byPath['agents.c.target']?.message).toContain('built-in agent runs inside the daemon')
  })

  it('rejects two feeds of one agent that resolve to the same name, naming the agent and both feeds', () => {
    const issues = issuesOf(
      [
        'services:',
        '  market: { url: "http://127.0.0.1:9" }',
        'agents:',
        '  trader:',
        '    adapter: codex',
        '    feeds:',
        '      - { source: market, path: /api/v1/summary, ttl: 60 }',
        '      - { source: market, path: /other/summary/, ttl: 60 }',
        '      - { name: summary, source: market, path: /x, ttl: 60 }',
        '      - { source: market, path: /, ttl: 60 }',
        '      - { source: market, path: /, ttl: 60 }',
      ].join('\n'),
    )
    expect(issues.map((issue) => [issue.path, issue.line])).toEqual([
      ['agents.trader.feeds[1].path', 8],
      ['agents.trader.feeds[2].name', 9],
    ])
    expect(issues[0]?.message).toBe(
      'feed "summary" (#2) of agent "trader": the name "summary" is already used by feed #1: give one of them a different name',
    )
    // `/` derives `<source>-feed-<n>`, distinct per position, so two of them do not collide.
    expect(issues.some((issue) => issue.message.includes('market-feed'))).toBe(false)
  })

  it('rejects a feed ttl that is not a number of seconds', () => {
    const [issue] = issuesOf(
      'services:\n  s: { url: "http://127.0.0.1:9" }\nagents:\n  a:\n    adapter: codex\n    feeds: [{ source: s, path: /x, ttl: soon }]\n',
    )
    expect(issue).toMatchObject({ path: 'agents.a.feeds[0].ttl', line: 6 })
    expect(issue?.message).toMatch(/number/)
  })

  it('validates feed paths and ttls, and URLs', () => {
    const issues = issuesOf(
      'services:\n  s: { url: "ftp://x" }\nagents:\n  a: { adapter: codex, feeds: [{ source: s, path: relative, ttl: 0 }] }\n',
    )
    expect(issues.map((issue) => issue.path).sort()).toEqual([
      'agents.a.feeds[0].path',
      'agents.a.feeds[0].ttl',
      'services.s.url',
    ])
  })

  it('lifts providers.allowPrivateNetworks out of the provider map (default off)', () => {
    expect(parseConfig('').allowPrivateNetworks).toBe(false)
    const config = parseConfig(
      'providers:\n  allowPrivateNetworks: true\n  ollama: { baseUrl: "http://127.0.0.1:11434/v1" }\n',
    )
    expect(config.allowPrivateNetworks).toBe(true)
    expect(Object.keys(config.providers)).toEqual(['ollama'])
    expect(issuesOf('providers:\n  allowPrivateNetworks: yes please\n')[0]?.path).toBe(
      'providers.allowPrivateNetworks',
    )
    expect(
      issuesOf('providers:\n  ollama: { baseUrl: "http://127.0.0.1:1/v1", bogus: 1 }\n')[0]?.message,
    ).toMatch(/unknown key "bogus"; expected one of: baseUrl, apiKeyEnv, model/)
  })

  it('names what replaced server.allowLocalProviders', () => {
    expect(issuesOf('server: { allowLocalProviders: true }\n')[0]?.message).toMatch(
      /replaced by providers.allowPrivateNetworks/,
    )
  })

  it('answers names such as __proto__ and constructor with nothing (no prototype in name maps)', () => {
    const config = parseConfig('agents:\n  reviewer: { adapter: codex }\n')
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(config.agents[name], name).toBeUndefined()
      expect(config.providers[name], name).toBeUndefined()
      expect(config.services[name], name).toBeUndefined()
      expect(config.targets[name], name).toBeUndefined()
    }
    expect(config.agents.reviewer?.adapter).toBe('codex')
  })

  // Issue 17 item 4: even the operator's feeds go where their path says, with the service's credentials.
  it('refuses dot segments and encoded dots or slashes in a feed path, naming file, line and key path', () => {
    const issues = issuesOf(
      [
        'services:',
        '  market: { url: "http://127.0.0.1:8080", userFeedPaths: [/api/v1, "/api/../admin"] }',
        'agents:',
        '  reviewer:',
        '    adapter: codex',
        '    feeds:',
        '      - { source: market, path: /api/v1/summary, ttl: 60 }',
        '      - { source: market, path: "/../../etc/passwd", ttl: 60 }',
        '      - { name: x, source: market, path: "/%2e%2e/x", ttl: 60 }',
        '',
      ].join('\n'),
    )
    expect(issues.map((issue) => [issue.path, issue.line])).toEqual([
      ['services.market.userFeedPaths[1]', 2],
      ['agents.reviewer.feeds[1].path', 8],
      ['agents.reviewer.feeds[2].path', 9],
    ])
    expect(issues[1]).toMatchObject({ file: '/p/hangar.yaml' })
    expect(issues[1]?.message).toBe(
      'feed "passwd" (#2) of agent "reviewer": path "/../../etc/passwd" is refused: it may not hold a ".." segment',
    )
    expect(issues[2]?.message).toMatch(/encoded character "%2e"/)
  })

  it('accepts userFeedPaths and safe feed paths', () => {
    const config = parseConfig(
      'services:\n  market: { url: "http://127.0.0.1:8080", userFeedPaths: [/api/v1] }\n' +
        'agents:\n  r: { adapter: codex, feeds: [{ source: market, path: "/admin/export?all=1", ttl: 5 }] }\n',
    )
    expect(config.services.market?.userFeedPaths).toEqual(['/api/v1'])
  })

  // Issue 18 item 9: a CLI the daemon's PATH does not reach is pointed at with adapters.<id>.path; the key
  // is strict like every other (a relative path, an unknown adapter or the built-in one are refused).
  it('takes adapters.<id>.path as an absolute path of a CLI adapter', () => {
    const config = parseConfig(
      'adapters:\n  claude-code: { path: /home/me/.nvm/versions/node/v22/bin/claude }\n',
    )
    expect(config.adapters['claude-code']).toEqual({ path: '/home/me/.nvm/versions/node/v22/bin/claude' })
    expect(parseConfig('').adapters).toEqual({})
    const issues = issuesOf(
      'adapters:\n  codex: { path: bin/codex }\n  builtin: { path: /x }\n  gemini: { path: /g, args: [] }\n',
    )
    const byPath = new Map(issues.map((issue) => [issue.path, issue]))
    expect([...byPath.keys()].sort()).toEqual([
      'adapters.builtin',
      'adapters.codex.path',
      'adapters.gemini.args',
    ])
    expect(byPath.get('adapters.codex.path')).toMatchObject({ line: 2 })
    expect(byPath.get('adapters.codex.path')?.message).toMatch(/^expected an absolute path to the CLI/)
    expect(byPath.get('adapters.builtin')?.message).toMatch(
      /^unknown key "builtin"; expected one of: claude-code, codex/,
    )
  })
  // Issue 18 item 1: run limits are durations or `off`, checked like every key (file, line, key path).
  it('takes timeout and idleTimeout as durations or off, and refuses anything else', () => {
    const config = parseConfig(
      'agents:\n  r: { adapter: codex, timeout: 2h, idleTimeout: "90s" }\n  s: { adapter: codex, timeout: off }\n',
    )
    expect(config.agents.r).toMatchObject({ timeout: '2h', idleTimeout: '90s' })
    expect(config.agents.s?.timeout).toBe('off')
    const issues = issuesOf(
      'agents:\n  r:\n    adapter: codex\n    timeout: 5 minutes\n    idleTimeout: 0s\n  s: { adapter: codex, timeout: 90 }\n',
    )
    expect(issues.map((issue) => [issue.path, issue.line])).toEqual([
      ['agents.r.timeout', 4],
      ['agents.r.idleTimeout', 5],
      ['agents.s.timeout', 6],
    ])
    for (const issue of issues)
      expect(issue.message).toBe('expected a duration such as "90s", "30m" or "2h", or "off"')
  })

  // Issue 18 item 7: feeds on an unproxied profile never reach the model, and nothing said so.
  it('warns, without refusing, on an agent with feeds and proxy: false', () => {
    const config = parseConfig(
      [
        'services:',
        '  ops: { url: "http://127.0.0.1:8080" }',
        'agents:',
        '  offline: { adapter: codex, proxy: false, feeds: [{ source: ops, path: /status, ttl: 60 }] }',
        '  proxied: { adapter: codex, feeds: [{ source: ops, path: /status, ttl: 60 }] }',
        '  plain: { adapter: codex, proxy: false }',
      ].join('\n'),
    )
    expect(profileIssues('offline', config.agents.offline!, config)).toEqual([
      {
        path: ['proxy'],
        severity: 'warning',
        message: expect.stringMatching(/^agent "offline" has 1 feed \(status\) but proxy: false/),
      },
    ])
    expect(profileIssues('proxied', config.agents.proxied!, config)).toEqual([])
    expect(profileIssues('plain', config.agents.plain!, config)).toEqual([])
    // An error is still an error, and carries no severity.
    const [unknown] = profileIssues(
      'offline',
      { ...config.agents.offline!, target: 'nowhere' },
      config,
    ).filter((issue) => issue.path[0] === 'target')
    expect(unknown).toBeDefined()
    expect(unknown!.severity).toBeUndefined()
  })
})
