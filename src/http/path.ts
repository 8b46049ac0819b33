// The one path decoder. uWebSockets.js hands us the raw path; every segment
// is percent-decoded on its own, so "%2F" inside an id stays part of the id
// and is never a separator.
import { ApiError } from '../core/errors'

export function decodePath(rawPath: string): string[] {
  const parts = rawPath.split('/')
  // The leading "/" yields one empty part; a single trailing "/" is tolerated.
  parts.shift()
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop()
  for (let i = 0; i < parts.length; i++) {
    // decodeURIComponent hands back a segment without "%" unchanged, at the cost of a copy: most have none.
    if (parts[i]!.includes('%')) parts[i] = decodeSegment(parts[i]!, i)
  }
  return parts
}

function decodeSegment(part: string, i: number): string {
  try {
    return decodeURIComponent(part)
  } catch {
    throw new ApiError('bad_request', `path segment ${i + 1} ("${part}") is not valid percent-encoding`)
  }
}

/** Query parameters, decoded ("+" and %20 are spaces). */
export function decodeQuery(rawQuery: string | undefined): URLSearchParams {
  return new URLSearchParams(rawQuery ?? '')
}
