// One row of the proxy's request log, as tests store them: an ordinary metered request, with what the test
// is about given.
import type { NewProxyRequest } from '../../src/store/repositories/proxy-requests-repository.js'

export function proxyRequestRow(
  fields: Pick<NewProxyRequest, 'id' | 'profile' | 'startedAt' | 'costUsd'> & Partial<NewProxyRequest>,
): NewProxyRequest {
  return {
    runId: null,
    tokenId: 'tok',
    family: 'anthropic',
    method: 'POST',
    path: '/v1/messages',
    model: 'm',
    stream: false,
    status: 200,
    feeds: [],
    usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    error: null,
    durationMs: 1,
    ...fields,
  }
}
