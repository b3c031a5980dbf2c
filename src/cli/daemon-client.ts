// Talking to a running daemon as the owner, through daemon.json: JSON requests with the one error
// envelope turned back into an AppError, and a run's SSE stream read to its run-end.
import { AppError, ERROR_CODES, type ErrorCode } from '../core/errors.js'
import type { EventEnvelope } from '../core/events.js'
import { readDaemonFile } from './daemon-file.js'

export interface DaemonClient {
  url: string
  request<T>(method: string, route: string, body?: unknown): Promise<T>
  /** Yields the run's events from the start (or after `afterSeq`) until its run-end. */
  follow(runId: string, afterSeq?: number): AsyncIterable<EventEnvelope>
}

/** The client of the daemon running on this data dir, or null when there is none. */
export async function connectDaemon(dataDir: string): Promise<DaemonClient | null> {
  const daemon = await readDaemonFile(dataDir)
  if (!daemon) return null
  const headers = { authorization: `Bearer ${daemon.token}` }
  return {
    url: daemon.url,
    async request<T>(method: string, route: string, body?: unknown): Promise<T> {
      let response: Response
      try {
        response = await fetch(`${daemon.url}${route}`, {
          method,
          headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        })
      } catch {
        throw new AppError('daemon_not_running', `the daemon at ${daemon.url} does not answer`, {
          hint: 'check it with hangar doctor, or stop it and try again',
        })
      }
      const payload = (await response.json().catch(() => null)) as {
        error?: { code?: string; message?: string; details?: Record<string, unknown> }
      } | null
      if (!response.ok) {
        const code = (ERROR_CODES as readonly string[]).includes(payload?.error?.code ?? '')
          ? (payload!.error!.code as ErrorCode)
          : 'upstream_error'
        throw new AppError(code, payload?.error?.message ?? `the daemon answered ${response.status}`, {
          ...(payload?.error?.details && { details: payload.error.details }),
        })
      }
      return payload as T
    },
    async *follow(runId: string, afterSeq = 0) {
      let last = afterSeq
      // A stream cut by a lagging disconnect is resumed from the last id until the run ends.
      for (;;) {
        const response = await fetch(`${daemon.url}/api/runs/${runId}/events`, {
          headers: { ...headers, ...(last > 0 && { 'last-event-id': String(last) }) },
        })
        if (!response.ok || !response.body) throw new AppError('upstream_error', `cannot follow run ${runId}`)
        const decoder = new TextDecoder()
        let buffer = ''
        for await (const chunk of response.body) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true })
          let boundary = buffer.indexOf('\n\n')
          while (boundary !== -1) {
            const block = buffer.slice(0, boundary)
            buffer = buffer.slice(boundary + 2)
            const data = block
              .split('\n')
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trimStart())
              .join('\n')
            if (data) {
              const envelope = JSON.parse(data) as EventEnvelope
              last = envelope.seq
              yield envelope
              if (envelope.type === 'run-end') return
            }
            boundary = buffer.indexOf('\n\n')
          }
        }
      }
    },
  }
}
