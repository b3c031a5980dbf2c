// The GitHub report target against a loopback server: the comment goes to the issue's path with the
// operator's token, a loopback URL is refused unless the operator allowed private networks, and an issue
// reference from a payload is only ever owner/name and a positive number (no path injection).
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDeliveryLimiter } from '../server/routes/trigger-routes.js'
import {
  createGithubReportTarget,
  formatReportMarkdown,
  issueOfPayload,
  type TriggerReport,
} from './trigger-report.js'

const report: TriggerReport = {
  triggerId: 'trg_1',
  triggerName: 'issues',
  fireId: 'tfr_1',
  runId: 'run_1',
  conversationId: 'conv_1',
  status: 'succeeded',
  reason: null,
  summary: 'Made the widget blue.',
  diffStat: { files: 2, created: 1, modified: 1, deleted: 0 },
  link: 'http://127.0.0.1:7456/runs/run_1',
}

describe('GitHub report target', () => {
  let server: Server
  let url: string
  const received: { path: string; authorization: string | undefined; body: string }[] = []

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response) => {
      let body = ''
      request.on('data', (chunk: Buffer) => (body += chunk.toString()))
      request.on('end', () => {
        received.push({ path: request.url!, authorization: request.headers.authorization, body })
        response.writeHead(201).end('{}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
  })

  it('posts the comment with the bearer token when loopback is allowed', async () => {
    const target = createGithubReportTarget({
      service: { url, auth: { bearerEnv: 'GH_TOKEN_FOR_TEST' } },
      env: { GH_TOKEN_FOR_TEST: 'ghp_secret' },
      allowPrivateNetworks: true,
    })
    await target.send(report, { repository: 'acme/widgets', issue: 42 })
    expect(received.at(-1)).toMatchObject({
      path: '/repos/acme/widgets/issues/42/comments',
      authorization: 'Bearer ghp_secret',
    })
    const body = JSON.parse(received.at(-1)!.body) as { body: string }
    expect(body.body).toBe(formatReportMarkdown(report))
    expect(body.body).toContain('Files changed: 2 (1 created, 1 modified, 0 deleted)')
  })

  it('refuses a loopback URL unless the operator allowed private networks', async () => {
    const count = received.length
    const target = createGithubReportTarget({ service: { url }, env: {}, allowPrivateNetworks: false })
    await expect(target.send(report, { repository: 'acme/widgets', issue: 42 })).rejects.toThrow(
      /loopback or private address/,
    )
    expect(received.length).toBe(count)
  })

  it('says what is missing: the service, the token, the issue', async () => {
    const none = createGithubReportTarget({ service: undefined, env: {}, allowPrivateNetworks: true })
    await expect(none.send(report, { repository: 'a/b', issue: 1 })).rejects.toThrow(/no services.github/)
    const noToken = createGithubReportTarget({
      service: { url, auth: { bearerEnv: 'UNSET_TOKEN' } },
      env: {},
      allowPrivateNetworks: true,
    })
    await expect(noToken.send(report, { repository: 'a/b', issue: 1 })).rejects.toThrow(
      /UNSET_TOKEN is not set/,
    )
    const target = createGithubReportTarget({ service: { url }, env: {}, allowPrivateNetworks: true })
    await expect(target.send(report, null)).rejects.toThrow(/named no issue/)
    await expect(target.send(report, { repository: '../../admin', issue: 1 })).rejects.toThrow(/not an issue/)
    await expect(target.send(report, { repository: '../..', issue: 1 })).rejects.toThrow(/not an issue/)
  })

  it('takes an issue from a payload only when it is owner/name and a positive number', () => {
    expect(issueOfPayload({ repository: { full_name: 'acme/widgets' }, issue: { number: 7 } })).toEqual({
      repository: 'acme/widgets',
      issue: 7,
    })
    expect(issueOfPayload({ repository: { full_name: 'acme/../x' }, issue: { number: 7 } })).toBeNull()
    expect(issueOfPayload({ repository: { full_name: 'a/b' }, issue: { number: '7/../../x' } })).toBeNull()
    expect(issueOfPayload({ repository: { full_name: 'a/b' }, issue: { number: -1 } })).toBeNull()
    expect(issueOfPayload(null)).toBeNull()
  })
})

describe('delivery limiter', () => {
  it('takes at most max deliveries per trigger in a window, then answers rate_limited', () => {
    let now = 0
    const limiter = createDeliveryLimiter({ max: 2, windowMs: 1000, clock: () => new Date(now) })
    limiter.take('a')
    limiter.take('a')
    limiter.take('b')
    expect(() => limiter.take('a')).toThrow(/too many deliveries/)
    now = 1001
    expect(() => limiter.take('a')).not.toThrow()
  })
})
