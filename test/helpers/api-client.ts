// The REST API of a daemon under test, as curl would use it: a bearer token, JSON in and out.
export const ENDED_STATUSES = ['succeeded', 'failed', 'cancelled', 'interrupted', 'awaiting_confirmation']

export interface ApiRun {
  id: string
  status: string
  reason: string | null
}

/** `connection` is read on each call: the daemon and its token usually appear in a beforeAll. */
export function createApiClient(connection: () => { url: string; token: string }) {
  async function api<T>(
    method: string,
    route: string,
    body?: unknown,
    token = connection().token,
  ): Promise<{ status: number; json: T }> {
    const response = await fetch(`${connection().url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, json: (text ? JSON.parse(text) : null) as T }
  }

  /** Polls the run until its status is one of `statuses`. */
  async function waitForStatus<R extends ApiRun = ApiRun>(
    runId: string,
    statuses: readonly string[] = ENDED_STATUSES,
    timeoutMs = 60_000,
  ): Promise<R> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const { json } = await api<R>('GET', `/api/runs/${runId}`)
      if (statuses.includes(json.status)) return json
      if (Date.now() > deadline) throw new Error(`run ${runId} is still ${json.status}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  return { api, waitForStatus }
}
