// The path a gateway request is forwarded to, below the service's source
// path. Upstreams disagree on what a dot segment is ("%2e%2e", "..;",
// "%252e%252e" after a second decoding, "..%2F" where "%2F" splits), and
// undici's URL parser resolves "../" and "%2e%2e/" itself. So every segment
// that any of those readings turns into "." or ".." is resolved here, and
// what is forwarded holds none: no upstream can climb out of the source path.
import { ApiError } from '../core/errors'

/** At most this many rounds of percent-decoding ("%25252e" is three). */
const DECODING_ROUNDS = 4

function decodedFully(segment: string): string {
  let text = segment
  for (let round = 0; round < DECODING_ROUNDS && text.includes('%'); round++) {
    try {
      const next = decodeURIComponent(text)
      if (next === text) break
      text = next
    } catch {
      break
    }
  }
  return text
}

/** What a segment is to the most lenient upstream: its parts between "/" or "\", each without ";params". */
function readings(segment: string): string[] {
  return decodedFully(segment).split(/[/\\]/).map((part) => part.split(';')[0]!)
}

const isDot = (part: string): boolean => part === '.' || part === '..'

/**
 * The raw segments after /gateway/{package}/{service}, with dot segments
 * resolved; 400 when they climb above the service's source path or hide a
 * dot segment behind an encoded separator. The segments kept are forwarded
 * as the client sent them.
 */
export function forwardedSegments(raw: readonly string[]): string[] {
  const out: string[] = []
  for (const segment of raw) {
    const parts = readings(segment)
    if (parts.length > 1) {
      if (parts.some(isDot)) throw new ApiError('bad_request', 'the path holds a dot segment behind an encoded "/" or "\\": it is not forwarded')
      out.push(segment)
    } else if (parts[0] === '..') {
      if (out.length === 0) throw new ApiError('bad_request', "the path leaves the service's source path: it is not forwarded")
      out.pop()
    } else if (parts[0] !== '.') {
      out.push(segment)
    }
  }
  // "a/." and "a/b/.." name the folder "a/": the trailing "/" stays.
  const last = raw.length > 0 ? readings(raw[raw.length - 1]!) : []
  if (last.length === 1 && isDot(last[0]!) && out[out.length - 1] !== '') out.push('')
  return out
}
