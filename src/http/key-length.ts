// The length check of a value that becomes part of an LMDB key, measured as
// the key stores it (keyPartBytes: UTF-8, U+0000-U+0004 count two); the
// limits themselves are the routes' (src/graph/validate.ts).
import { ApiError } from '../core/errors'
import { keyPartBytes } from '../contract/key-encoding'

/** A 400 when `value` takes more than `max` bytes in a key. */
export function checkKeyBytes(what: string, value: string, max: number): string {
  const bytes = keyPartBytes(value)
  if (bytes <= max) return value
  const counted = bytes === Buffer.byteLength(value) ? '' : ' (the characters U+0000 to U+0004 count two bytes each)'
  throw new ApiError('bad_request', `${what} is longer than ${max} bytes${counted}`)
}
