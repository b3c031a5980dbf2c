// What a feed path may look like, and when a path lies under a prefix. Feeds are fetched with a service's
// credentials, so a path must name exactly what it says: no segment a URL parser or a server may fold away
// (`..`, `.`, encoded dots or slashes, backslashes, doubled slashes, characters the WHATWG parser strips).
// In core because hangar.yaml's validation and the feed layer (manifest and fetcher) apply the same rules.

/**
 * Why `path` (`/a/b?q=1`, as declared or with `{agent}` substituted) is not a safe feed path; undefined when
 * it is. Only the part before `?` is a path; the query is checked for characters alone.
 */
export function feedPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'it must start with "/"'
  // The URL parser drops tabs and newlines anywhere (`/.\t./x` is `/../x`) and trims spaces and controls.
  if (/[^\x21-\x7e]/.test(path))
    return 'it may only hold printable ASCII characters without spaces (percent-encode others)'
  if (path.includes('\\')) return 'it may not hold a backslash (servers may read it as "/")'
  if (path.includes('#')) return 'it may not hold a fragment ("#")'
  const pathPart = path.split('?', 1)[0]!
  // `%2e` is a dot to the URL parser; `%2f`/`%5c` are slashes to many servers; `%25` hides one of those
  // behind a second decoding; encoded controls are stripped or truncate paths on some servers.
  const encoded = /%(2e|2f|5c|25|[01][0-9a-f]|7f)/i.exec(pathPart)
  if (encoded) return `it may not hold the encoded character "${encoded[0]}" in its path`
  if (pathPart.includes('//')) return 'it may not hold an empty segment ("//")'
  for (const segment of pathPart.split('/')) {
    // `..;x` is `..` to servers that strip path parameters (Tomcat, Jetty).
    const bare = segment.split(';', 1)[0]
    if (bare === '..' || bare === '.') return `it may not hold a "${bare}" segment`
  }
  return undefined
}

/**
 * Whether `path` lies under `prefix` on a segment boundary: `/api/v1` covers `/api/v1`, `/api/v1/x` and
 * `/api/v1?q`, not `/api/v1admin`. A trailing slash on the prefix is ignored; `/` covers every path.
 */
export function isUnderPathPrefix(path: string, prefix: string): boolean {
  const base = prefix.replace(/\/+$/, '')
  const pathPart = path.split('?', 1)[0]!
  if (base === '') return pathPart.startsWith('/')
  return pathPart === base || pathPart.startsWith(`${base}/`)
}
