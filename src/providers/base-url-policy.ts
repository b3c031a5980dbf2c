// Which provider base URLs a user may configure. A per-user base URL makes the daemon send requests (with
// the user's key) wherever it points, so it is a server-side request forgery risk: cloud metadata and
// link-local addresses are always refused, loopback and private networks only pass when the operator
// allows local providers (Ollama, vLLM on the LAN). Literal IPs are checked in every notation the URL
// parser accepts; host names are checked by name only, since resolving them here would not stop a DNS
// answer that changes later: that check belongs to the connection (guarded-connection.ts classifies the
// resolved address with the same rules).
import { isIPv4, isIPv6 } from 'node:net'
import { AppError } from '../core/errors.js'

export type AddressClass = 'public' | 'local' | 'metadata'

const LOCAL_NAMES = new Set(['localhost'])
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
])

function classifyIPv4(octets: number[]): AddressClass {
  const [a = 0, b = 0, c = 0, d = 0] = octets
  // 169.254.0.0/16 is link-local, where AWS, GCP and Azure serve instance metadata and credentials.
  if (a === 169 && b === 254) return 'metadata'
  // Alibaba Cloud's metadata service.
  if (a === 100 && b === 100 && c === 100 && d === 200) return 'metadata'
  if (a === 127 || a === 10 || a === 0) return 'local'
  if (a === 172 && b >= 16 && b <= 31) return 'local'
  if (a === 192 && b === 168) return 'local'
  // 100.64.0.0/10, carrier-grade NAT: private in practice (Tailscale addresses live there).
  if (a === 100 && b >= 64 && b <= 127) return 'local'
  return 'public'
}

/** The eight 16-bit groups of an IPv6 address, with `::` expanded and a dotted IPv4 tail converted. */
function ipv6Groups(address: string): number[] {
  let text = address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split('.').map(Number)
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  const zeros = new Array<number>(8 - left.length - right.length).fill(0)
  return [...left, ...zeros, ...right]
}

function classifyIPv6(address: string): AddressClass {
  const groups = ipv6Groups(address)
  const [first = 0, second = 0] = groups
  const zeroUpTo = (end: number) => groups.slice(0, end).every((group) => group === 0)
  const embeddedIPv4 = () => {
    const high = groups[6] ?? 0
    const low = groups[7] ?? 0
    return classifyIPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
  }
  if (zeroUpTo(8)) return 'local'
  if (zeroUpTo(7) && groups[7] === 1) return 'local'
  // fe80::/10 link-local; fd00:ec2::254 is AWS's IPv6 metadata endpoint.
  if ((first & 0xffc0) === 0xfe80) return 'metadata'
  const middleZero = groups.slice(2, 7).every((group) => group === 0)
  if (first === 0xfd00 && second === 0x0ec2 && middleZero && groups[7] === 0x254) return 'metadata'
  // fc00::/7 unique local, fec0::/10 the old site-local.
  if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfec0) return 'local'
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the
  // IPv4 address inside them.
  if (zeroUpTo(5) && (groups[5] === 0xffff || groups[5] === 0)) return embeddedIPv4()
  if (first === 0x64 && second === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) {
    return embeddedIPv4()
  }
  return 'public'
}

/** What a host name or IP literal (any bracket, case or trailing dot) is: public, local or metadata. */
export function classifyHost(hostname: string): AddressClass {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
  if (isIPv4(host)) return classifyIPv4(host.split('.').map(Number))
  if (isIPv6(host)) return classifyIPv6(host)
  if (METADATA_NAMES.has(host)) return 'metadata'
  if (LOCAL_NAMES.has(host) || host.endsWith('.localhost')) return 'local'
  return 'public'
}

function refuse(message: string, details: Record<string, unknown>, hint?: string): never {
  throw new AppError('invalid_request', message, { details: { field: 'baseUrl', ...details }, hint })
}

/** Throws AppError `invalid_request` when `url` may not be used as a provider base URL. */
export function checkProviderBaseUrl(url: string, options: { allowLocal: boolean }): void {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    refuse('The provider base URL is not a valid URL', {})
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    refuse(`The provider base URL must use http or https, not ${parsed.protocol.replace(/:$/, '')}`, {
      scheme: parsed.protocol,
    })
  }
  // Credentials in the URL would be logged and shown wherever the URL is; keys belong in the vault.
  if (parsed.username !== '' || parsed.password !== '') {
    refuse(
      'The provider base URL must not contain a user name or password',
      {},
      'Store the key as the API key.',
    )
  }
  // The URL parser has already turned decimal, octal and hex IPv4 forms into dotted quads.
  const host = parsed.hostname
  const kind = classifyHost(host)
  if (kind === 'metadata') {
    refuse('The provider base URL points at a link-local or cloud metadata address', { host })
  }
  if (kind === 'local' && !options.allowLocal) {
    refuse(
      'The provider base URL points at a loopback or private address, and local providers are not allowed',
      { host },
      'An operator can allow them with providers.allowPrivateNetworks in hangar.yaml.',
    )
  }
}
