// A web origin (RFC 6454) as browsers send it in the Origin header:
// scheme, host and port only, in the URL standard's serialization (lower-case
// host, no default port, no trailing slash), so that allow-lists compare as
// plain strings.

/** Why `value` is not an http(s) origin in its serialized form, or undefined when it is one. */
export function originProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `"${value}" is not an origin (scheme://host[:port])`
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `"${value}" must be an http or https origin`
  if (url.origin !== value) return `"${value}" is not an origin as browsers send it; write "${url.origin}"`
  return undefined
}

/** The origin of an absolute URL (a redirect URI), or undefined when it has none. */
export function originOf(uri: string): string | undefined {
  try {
    const origin = new URL(uri).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}
