// Shared by the provider tests: draining a stream, catching the AppError a call fails with, and a tiny
// raw HTTP server for wire shapes the mock model server cannot script.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AppError } from '../../src/core/errors.js'
import type { LlmClient, LlmRequest, LlmStreamEvent } from '../../src/providers/types.js'
import { type MockModelServer, reply } from '../fixtures/mock-model-server.js'

export async function collect(events: AsyncIterable<LlmStreamEvent>): Promise<LlmStreamEvent[]> {
  const collected: LlmStreamEvent[] = []
  for await (const event of events) collected.push(event)
  return collected
}

export async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`)
  return error
}

export async function startRawServer(handle: (request: IncomingMessage, response: ServerResponse) => void) {
  const raw = createServer((incoming, response) => {
    incoming.resume()
    incoming.on('end', () => handle(incoming, response))
  })
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve))
  const { port } = raw.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        raw.closeAllConnections()
        raw.close(() => resolve())
      }),
  }
}

/**
 * Aborts a stream at its first text delta while the model hangs: the client must end with an error rather
 * than wait (a client that waited would run into the test's timeout).
 */
export async function abortMidStream(
  client: LlmClient,
  server: MockModelServer,
  request: (extra: Partial<LlmRequest>) => LlmRequest,
): Promise<AppError> {
  server.enqueue(reply().text('started').hang())
  const controller = new AbortController()
  return failure(
    (async () => {
      for await (const event of client.stream(request({ signal: controller.signal }))) {
        if (event.type === 'text-delta') controller.abort()
      }
    })(),
  )
}
