// Connections to a base URL a user set. Checking the URL string when it is saved cannot stop a DNS name
// that resolves (now, or after a rebinding) to 127.0.0.1, a private network or the cloud metadata
// service, so the address is checked where the socket is opened: a `lookup` that classifies every
// resolved address with base-url-policy's rules. Metadata and link-local addresses are always refused;
// loopback and private ones unless the operator opted in (`providers.allowPrivateNetworks`). Node skips
// `lookup` for IP literals, so those are checked on the string (checkProviderBaseUrl) before connecting.
import dns, { type LookupAddress, type LookupOptions } from 'node:dns'
import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { checkProviderBaseUrl, classifyHost } from './base-url-policy.js'

export interface ConnectionPolicy {
  /** `providers.allowPrivateNetworks`: loopback and private addresses may be reached. */
  allowPrivate: boolean
}

type Resolve = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

/** Why a connection was refused: a readable line that names the host the user chose, not its address. */
export class RefusedAddressError extends Error {
  override readonly name = 'RefusedAddressError'
}

function refusalOf(hostname: string, kind: 'local' | 'metadata'): RefusedAddressError {
  return new RefusedAddressError(
    kind === 'metadata'
      ? `the base URL set for this provider (host ${hostname}) resolves to a link-local or cloud metadata address, which is never allowed`
      : `the base URL set for this provider (host ${hostname}) resolves to a loopback or private address, which this daemon does not allow (an operator can allow it with providers.allowPrivateNetworks in hangar.yaml)`,
  )
}

/** A `lookup` for sockets: resolves as dns.lookup does, then refuses what the policy does not allow. */
export function createGuardedLookup(
  policy: ConnectionPolicy,
  resolve: Resolve = dns.lookup as unknown as Resolve,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '')
      // Any refused address refuses the name: the socket may try each of them (happy eyeballs).
      for (const { address } of addresses) {
        const kind = classifyHost(address)
        if (kind === 'metadata' || (kind === 'local' && !policy.allowPrivate))
          return callback(refusalOf(hostname, kind), '')
      }
      const first = addresses[0]
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '')
      if (options.all) callback(null, addresses)
      else callback(null, first.address, first.family)
    })
  }
}

export interface GuardedAgents {
  http: http.Agent
  https: https.Agent
}

const sharedAgents = new Map<boolean, GuardedAgents>()
const sharedLookups = new Map<boolean, LookupFunction>()

/** The guarded lookup of a policy, one per policy (the LLM proxy pools connections by it). */
export function guardedLookup(policy: ConnectionPolicy): LookupFunction {
  let lookup = sharedLookups.get(policy.allowPrivate)
  if (!lookup) sharedLookups.set(policy.allowPrivate, (lookup = createGuardedLookup(policy)))
  return lookup
}

/**
 * Keep-alive agents whose every socket went through the guarded lookup. They are apart from the pool of
 * the operator's upstreams, so a socket opened to a trusted address is never reused for a user's URL.
 */
export function guardedAgents(policy: ConnectionPolicy, resolve?: Resolve): GuardedAgents {
  const shared = resolve ? undefined : sharedAgents.get(policy.allowPrivate)
  if (shared) return shared
  const lookup = createGuardedLookup(policy, resolve)
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 256, lookup }),
    https: new https.Agent({ keepAlive: true, maxSockets: 256, lookup }),
  }
  if (!resolve) sharedAgents.set(policy.allowPrivate, agents)
  return agents
}

/**
 * A fetch for the built-in agent's direct connection to a user-set base URL: the same guarded sockets,
 * no redirects followed, the body unencoded (node:http does not decompress).
 */
export function createGuardedFetch(policy: ConnectionPolicy, resolve?: Resolve): typeof fetch {
  const agents = guardedAgents(policy, resolve)
  return async (input, init) => {
    const request = new Request(input, init)
    const url = new URL(request.url)
    // IP literals never reach `lookup`: their string is the address.
    checkProviderBaseUrl(url.origin, { allowLocal: policy.allowPrivate })
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined
    const headers: Record<string, string> = Object.fromEntries(request.headers)
    headers['accept-encoding'] = 'identity'
    const client = url.protocol === 'https:' ? https : http
    return new Promise<Response>((resolveResponse, reject) => {
      const outgoing = client.request(url, {
        method: request.method,
        headers,
        agent: url.protocol === 'https:' ? agents.https : agents.http,
        signal: request.signal,
      })
      outgoing.once('error', reject)
      outgoing.once('response', (incoming: IncomingMessage) => {
        const responseHeaders = new Headers()
        for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2)
          responseHeaders.append(incoming.rawHeaders[index]!, incoming.rawHeaders[index + 1]!)
        const status = incoming.statusCode ?? 502
        const empty = status === 204 || status === 304 || request.method === 'HEAD'
        if (empty) incoming.resume()
        const stream = empty ? null : (Readable.toWeb(incoming) as NodeReadableStream<Uint8Array>)
        resolveResponse(
          new Response(stream as unknown as ReadableStream<Uint8Array> | null, {
            status,
            statusText: incoming.statusMessage ?? '',
            headers: responseHeaders,
          }),
        )
      })
      outgoing.end(body)
    })
  }
}
