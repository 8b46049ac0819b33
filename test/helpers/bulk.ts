// Bulk requests for the tests: a line as the single request it stands for,
// sent as one streamed NDJSON body, and the answer lines read back.
import { Readable } from 'node:stream'
import { request } from 'undici'

/** One operation: what a bulk line carries and what a single request sends. */
export interface Op {
  method: 'PUT' | 'POST' | 'DELETE' | 'GET'
  path: string
  headers?: Record<string, string>
  body?: unknown
}

export interface BulkResult {
  status: number
  contentType: string | undefined
  /** The answer lines, parsed (the summary is the last). */
  lines: Record<string, unknown>[]
  text: string
}

export const lineOf = (op: Op): string => `${JSON.stringify(op)}\n`

/** POSTs `body` (text, or lines made as they are sent) to `{base}/graph/v1/{tenant}/bulk{query}`. */
export async function bulk(base: string, tenant: string, token: string, body: string | Iterable<string>, query = '', contentType = 'application/x-ndjson'): Promise<BulkResult> {
  const res = await request(`${base}/graph/v1/${encodeURIComponent(tenant)}/bulk${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body: typeof body === 'string' ? body : Readable.from(body),
  })
  const text = await res.body.text()
  const type = res.headers['content-type']
  const lines = typeof type === 'string' && type.startsWith('application/x-ndjson')
    ? text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
    : []
  return { status: res.statusCode, contentType: typeof type === 'string' ? type : undefined, lines, text }
}

/** The single request an op stands for, answered as a bulk line would be: {status, body?} or {status, error}. */
export async function single(base: string, tenant: string, token: string, op: Op): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...op.headers }
  if (op.body !== undefined) headers['content-type'] = 'application/json'
  const res = await request(`${base}/graph/v1/${encodeURIComponent(tenant)}/${op.path}`, {
    method: op.method, headers, body: op.body === undefined ? undefined : JSON.stringify(op.body),
  })
  const text = await res.body.text()
  if (res.statusCode >= 400) return { status: res.statusCode, error: JSON.parse(text) as unknown }
  return text === '' ? { status: res.statusCode } : { status: res.statusCode, body: JSON.parse(text) as unknown }
}
