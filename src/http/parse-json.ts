// A request body parsed as JSON, or a 400 that says why not. Depth and size
// are bounded before (src/http/json-limits.ts).
import { isUtf8 } from 'node:buffer'
import { ApiError } from '../core/errors'

const BOM = 0xfeff

/**
 * JSON text as RFC 8259 has it: UTF-8, a leading byte order mark ignored.
 * Bytes that are not UTF-8 are refused (a SyntaxError saying so), never
 * stored with replacement characters in their place.
 */
export function parseJsonText(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) throw new SyntaxError('it is not valid UTF-8')
  const text = bytes.toString('utf8')
  return JSON.parse(text.charCodeAt(0) === BOM ? text.slice(1) : text)
}

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new ApiError('bad_request', 'the request body is empty; a JSON value is required')
  try {
    return parseJsonText(body)
  } catch (err) {
    throw new ApiError('bad_request', `the request body is not valid JSON: ${(err as Error).message}`)
  }
}
