// The one path decoder. uWebSockets.js hands us the raw path; every segment
// is percent-decoded on its own, so "%2F" inside an id stays part of the id
// and is never a separator.
import { ApiError } from '../errors'

export function decodePath(rawPath: string): string[] {
  const parts = rawPath.split('/')
  // The leading "/" yields one empty part; a single trailing "/" is tolerated.
  parts.shift()
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop()
  return parts.map((part, i) => {
    try {
      return decodeURIComponent(part)
    } catch {
      throw new ApiError('bad_request', `path segment ${i + 1} ("${part}") is not valid percent-encoding`)
    }
  })
}

/** Query parameters, decoded ("+" and %20 are spaces). */
export function decodeQuery(rawQuery: string | undefined): URLSearchParams {
  return new URLSearchParams(rawQuery ?? '')
}
