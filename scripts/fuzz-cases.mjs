// The generated requests of `npm run fuzz`: every one malformed or unauthorised in some way, so none may
// change the store or reach a model. Seeded (scripts/seeded-random.mjs) so a failure can be replayed with --seed.
import { gzipSync } from 'node:zlib'
import { seededRandom } from './seeded-random.mjs'

const HOSTILE_IDS = [
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e',
  '%00',
  'run_' + 'a'.repeat(4000),
  '%F0%9F%A6%84',
  "'%20OR%201=1%20--",
  '..%5c..%5cwindows',
  'act_00000000000000000000',
  'conv_zzzzzzzzzzzzzzzzzzzz',
  '%ff%fe',
  '__proto__',
  'constructor',
]

// Request bodies that no route accepts: bad syntax, wrong top-level types, every known field of the wrong
// type, prototype keys, deep nesting, invalid UTF-8, and one over the API's 1 MiB limit.
const WRONG_TYPES = {
  agent: 5,
  prompt: [],
  cwd: {},
  text: 7,
  name: [],
  token: 5,
  apiKey: 9,
  baseUrl: 1,
  title: 3,
  adapter: 1,
  reason: {},
  conversationId: 9,
  dependsOn: 'x',
  isolate: 'yes',
  model: 1,
  scopes: 'x',
  expiresIn: [],
  projectId: 4,
}
const BODIES = [
  { label: 'truncated JSON', body: '{"agent": "builtin", "prompt": ' },
  { label: 'JSON null', body: 'null' },
  { label: 'JSON array', body: '[]' },
  { label: 'JSON string', body: '"hello"' },
  { label: 'JSON number', body: '1e999' },
  { label: 'wrong field types', body: JSON.stringify(WRONG_TYPES) },
  {
    label: 'prototype keys',
    body: `{"__proto__": {"role": "owner"}, "constructor": {"prototype": {"x": 1}}, ${JSON.stringify(WRONG_TYPES).slice(1)}`,
  },
  { label: 'deep nesting', body: '['.repeat(50_000) + ']'.repeat(50_000) },
  {
    label: 'invalid UTF-8',
    body: Buffer.concat([
      Buffer.from('{"agent": "'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('", "prompt": 5}'),
    ]),
  },
  { label: 'empty', body: '' },
  { label: 'over 1 MiB', body: JSON.stringify({ prompt: 'x'.repeat(1_200_000), agent: 5 }) },
  { label: 'NUL bytes', body: '{"agent":"\u0000","prompt":\u0000}' },
]

const API_ROUTES = [
  ['GET', '/api/runs/:id'],
  ['GET', '/api/runs/:id/events'],
  ['GET', '/api/runs/:id/requests'],
  ['POST', '/api/runs'],
  ['POST', '/api/runs/:id/cancel'],
  ['POST', '/api/runs/:id/finalize'],
  ['GET', '/api/conversations/:id'],
  ['GET', '/api/conversations/:id/events'],
  ['POST', '/api/conversations'],
  ['POST', '/api/conversations/:id/messages'],
  ['DELETE', '/api/conversations/:id'],
  ['POST', '/api/actions/:id/confirm'],
  ['POST', '/api/actions/:id/reject'],
  ['GET', '/api/profiles/:id'],
  ['GET', '/api/profiles/:id/feeds'],
  ['POST', '/api/profiles'],
  ['PUT', '/api/profiles/:id'],
  ['DELETE', '/api/profiles/:id'],
  ['PUT', '/api/settings/providers/:id'],
  ['DELETE', '/api/settings/providers/:id'],
  ['GET', '/api/settings/providers/:id'],
  ['POST', '/api/tokens'],
  ['DELETE', '/api/tokens/:id'],
  ['POST', '/api/login'],
  ['GET', '/api/workspaces/:id'],
  ['DELETE', '/api/workspaces/:id'],
  ['GET', '/api/usage?from=:id&to=:id&groupBy=:id'],
  ['PATCH', '/api/runs'],
  ['POST', '/api/:id'],
  ['GET', '/api/nothing/:id'],
]

const PROXY_PATHS = [
  'v1/messages',
  'v1/chat/completions',
  'v1/responses',
  'v1beta/models/gemini-2.5-pro:generateContent',
  'v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
]

/** The shape an answer must have: the API's envelope, JSON-RPC, or a provider family's error. */
export function createFuzzCases({ seed, ownerPat, memberPat, memberCookie, proxyToken, origin }) {
  const random = seededRandom(seed)
  const pick = (list) => list[Math.floor(random() * list.length)]
  const foreign = 'http://evil.example'

  // Credentials: absent, garbage, and real ones (a valid one never comes with a valid body).
  const AUTH = [
    { label: 'no auth', headers: {} },
    { label: 'garbage bearer', headers: { authorization: 'Bearer hgr_aaaaaaaaaaaa_' + 'A'.repeat(38) } },
    { label: 'malformed auth', headers: { authorization: 'Bearer' } },
    { label: 'basic auth', headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } },
    { label: 'proxy token as bearer', headers: { authorization: `Bearer ${proxyToken}` } },
    { label: 'owner PAT', headers: { authorization: `Bearer ${ownerPat}` }, valid: true },
    { label: 'member PAT', headers: { authorization: `Bearer ${memberPat}` }, valid: true },
    { label: 'member cookie', headers: { cookie: memberCookie, origin }, valid: true },
    { label: 'member cookie, foreign origin', headers: { cookie: memberCookie, origin: foreign } },
    { label: 'member cookie, cross-site', headers: { cookie: memberCookie, 'sec-fetch-site': 'cross-site' } },
  ]
  const CONTENT = [
    { label: 'json', headers: { 'content-type': 'application/json' } },
    { label: 'text/plain', headers: { 'content-type': 'text/plain' } },
    { label: 'no content-type', headers: {} },
    { label: 'gzip claimed', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } },
    { label: 'compress', headers: { 'content-type': 'application/json', 'content-encoding': 'compress' } },
    {
      label: 'identity twice',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity, identity' },
    },
  ]

  function apiCase() {
    const [method, template] = pick(API_ROUTES)
    let auth = pick(AUTH)
    // Logging out with a real credential would end a session: not a malformed request.
    if (template === '/api/logout' && auth.valid) auth = AUTH[0]
    const pathname = template.replaceAll(':id', () => pick(HOSTILE_IDS))
    const headers = { ...auth.headers }
    const init = { method, headers }
    let label = `${method} ${pathname.slice(0, 80)} (${auth.label})`
    if (method !== 'GET' && method !== 'DELETE') {
      // An empty body is `{}`, which a route whose fields are all optional may rightly accept.
      const body = pick(auth.valid ? BODIES.filter((entry) => entry.label !== 'empty') : BODIES)
      const content = pick(CONTENT)
      Object.assign(headers, content.headers)
      init.body = body.body
      label += ` body ${body.label}, ${content.label}`
    }
    // A real credential on a route without a body may only meet a hostile id (every route template
    // without :id and without a body is excluded above by construction).
    return { target: 'api', expect: 'api', path: pathname, init, describe: label }
  }

  function mcpCase() {
    const auth = pick(AUTH)
    const headers = {
      ...auth.headers,
      accept: pick(['application/json, text/event-stream', 'text/html', '*/*']),
    }
    const variants = [
      ['not JSON', '{"jsonrpc": "2.0", "method": '],
      ['empty batch', '[]'],
      ['batch of junk', '[1, 2, "x"]'],
      ['no jsonrpc', '{"id": 1, "method": "tools/list"}'],
      ['wrong version', '{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}'],
      ['unknown method', '{"jsonrpc": "2.0", "id": 1, "method": "admin/shell", "params": {}}'],
      [
        'initialize bad params',
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 5}}',
      ],
      [
        'start_run wrong types',
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "start_run", "arguments": {"agent": 5, "prompt": [], "cwd": {}}}}',
      ],
      [
        'commit_proposal bad id',
        `{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "commit_proposal", "arguments": {"actionId": "${pick(HOSTILE_IDS)}"}}}`,
      ],
      [
        'unknown tool',
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "../../etc", "arguments": {}}}',
      ],
      ['huge id', `{"jsonrpc": "2.0", "id": ${'9'.repeat(400)}, "method": "tools/list"}`],
      ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
    ]
    const [label, body] = pick(variants)
    const content = pick(CONTENT)
    Object.assign(headers, content.headers)
    const method = random() < 0.85 ? 'POST' : pick(['GET', 'DELETE', 'PUT'])
    return {
      target: 'mcp',
      expect: 'mcp',
      path: '/api/mcp',
      init: { method, headers, ...(method !== 'GET' && { body }) },
      describe: `${method} /api/mcp ${label} (${auth.label}, ${content.label})`,
    }
  }

  function proxyCase() {
    const token = pick([
      proxyToken,
      proxyToken,
      proxyToken,
      'hgr_aaaaaaaaaaaa_' + 'B'.repeat(38),
      ownerPat,
      'x',
    ])
    const family = pick(['anthropic', 'openai', 'gemini', 'anthropic', 'openai', 'gemini', 'bogus'])
    const rest = pick([...PROXY_PATHS, '..%2f..%2fapi%2fhealth', '%2e%2e/%2e%2e/api/tokens'])
    const body = pick(BODIES.filter((entry) => entry.label !== 'over 1 MiB'))
    const headers = { 'content-type': 'application/json' }
    const coding = pick(['none', 'none', 'bad gzip', 'compress', 'identity, identity', 'gzip of junk', 'br'])
    let payload = body.body
    if (coding === 'bad gzip') headers['content-encoding'] = 'gzip'
    else if (coding === 'gzip of junk') {
      headers['content-encoding'] = 'gzip'
      payload = gzipSync(Buffer.from(typeof payload === 'string' ? payload : payload))
    } else if (coding !== 'none') headers['content-encoding'] = coding
    return {
      target: 'proxy',
      // The URL parser folds `%2e%2e` into `..` segments, so those paths name no family at all.
      expect: family === 'bogus' || rest.startsWith('%2e') ? 'any' : family,
      path: `/proxy/${token}/${family}/${rest}`,
      init: { method: 'POST', headers, body: payload },
      describe: `POST /proxy/<${token === proxyToken ? 'proxy token' : 'other'}>/${family}/${rest} body ${body.label}, ${coding}`,
    }
  }

  return {
    next(index) {
      const roll = random()
      const fuzzCase = roll < 0.55 ? apiCase() : roll < 0.75 ? mcpCase() : proxyCase()
      return { ...fuzzCase, index }
    },
  }
}
