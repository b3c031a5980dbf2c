// A small Anthropic Messages request sent through a proxy route (a run's own, as the built-in agent gets
// it), answered with its status and body.
import type { BuiltinProxyRoute } from '../../src/runs/builtin-model.js'

export function askThrough(route: Pick<BuiltinProxyRoute, 'baseUrlFor' | 'apiKey'>) {
  return () =>
    fetch(`${route.baseUrlFor('anthropic')}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': route.apiKey },
      body: JSON.stringify({
        model: 'claude-sonnet-4-6',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    }).then(async (response) => ({ status: response.status, body: await response.text() }))
}
