// Calls to an upstream identity provider (discovery, JWKS, token endpoint)
// with undici: bounded in time and size, and every failure an UpstreamError,
// so the callback can report it to the client as server_error instead of
// failing with a 500. Its message is for the client and names what failed
// ("its token endpoint could not be reached"), never an address, port or
// socket error: those would let anyone who can start a sign-in map the
// network behind this server. The detail goes to the operator's log.
import { request } from 'undici'
import { describeCause } from '../../core/errors'

const TIMEOUT_MS = 10_000
/** Discovery documents, key sets and token answers are small; a larger body is refused, not buffered. */
const MAX_BYTES = 1 << 20

export const NOT_REACHED = 'could not be reached'
export const NOT_ACCEPTED = 'answered with an error'

export class UpstreamError extends Error {
  /** `message` for the client, `detail` (URL, status, socket error) for the log. */
  constructor(message: string, readonly detail: string = message) {
    super(message)
  }
}

export interface UpstreamRequest {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
}

/**
 * The JSON object `url` answers with; a JSON error body of another status is
 * returned with it for the caller to report. `what` names the document or
 * endpoint for the client ("its token endpoint").
 */
export async function upstreamJson(url: string, what: string, init: UpstreamRequest = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  let status: number
  let text = ''
  try {
    const res = await request(url, {
      method: init.method ?? 'GET', headers: { accept: 'application/json', ...init.headers }, body: init.body,
      headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
    })
    status = res.statusCode
    for await (const chunk of res.body) {
      text += (chunk as Buffer).toString('utf8')
      if (text.length > MAX_BYTES) {
        res.body.destroy()
        throw new UpstreamError(`${what} ${NOT_ACCEPTED}`, `${url} answered more than ${MAX_BYTES} bytes`)
      }
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err
    throw new UpstreamError(`${what} ${NOT_REACHED}`, `${url} could not be reached: ${describeCause(err)}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new UpstreamError(`${what} ${NOT_ACCEPTED}`, `${url} answered ${status} without a JSON body`)
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UpstreamError(`${what} ${NOT_ACCEPTED}`, `${url} answered ${status} without a JSON object`)
  }
  return { status, json: json as Record<string, unknown> }
}
