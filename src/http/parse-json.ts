// A request body parsed as JSON, or a 400 that says why not. Depth and size
// are bounded before (src/http/json-limits.ts).
import { ApiError } from '../core/errors'

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new ApiError('bad_request', 'the request body is empty; a JSON value is required')
  try {
    return JSON.parse(body.toString('utf8'))
  } catch (err) {
    throw new ApiError('bad_request', `the request body is not valid JSON: ${(err as Error).message}`)
  }
}
