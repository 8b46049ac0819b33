// Calls to an upstream identity provider (discovery, JWKS, token endpoint)
// with undici: bounded in time and size, and every failure an UpstreamError
// whose message says what went wrong, so the callback can report it to the
// client as server_error instead of failing with a 500.
import { request } from 'undici'

const TIMEOUT_MS = 10_000
/** Discovery documents, key sets and token answers are small; a larger body is refused, not buffered. */
const MAX_BYTES = 1 << 20

export class UpstreamError extends Error {}

export interface UpstreamRequest {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
}

/** The JSON object `url` answers with 2xx; a JSON error body of another status is returned with it for the caller to report. */
export async function upstreamJson(url: string, init: UpstreamRequest = {}): Promise<{ status: number; json: Record<string, unknown> }> {
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
        throw new UpstreamError(`${url} answered more than ${MAX_BYTES} bytes`)
      }
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err
    throw new UpstreamError(`${url} could not be reached: ${(err as Error).message}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new UpstreamError(`${url} answered ${status} without a JSON body`)
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new UpstreamError(`${url} answered ${status} without a JSON object`)
  return { status, json: json as Record<string, unknown> }
}
