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
  /** The answer lines, parsed (with answers=errors the summary is the last). */
  lines: Record<string, unknown>[]
  text: string
}

export const lineOf = (op: Op): string => `${JSON.stringify(op)}\n`

/** POSTs `body` (text, or lines made as they are sent) to `{base}/graph/v1/{tenant}/bulk{query}`. */
export async function bulk(base: string, tenant: string, token: string, body: string | Buffer | Iterable<string>, query = '', contentType = 'application/x-ndjson'): Promise<BulkResult> {
  const res = await request(`${base}/graph/v1/${encodeURIComponent(tenant)}/bulk${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : Readable.from(body),
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

/** What an endless bulk request got before its server went away. */
export interface CutShort {
  /** Lines answered 204, in order from the first. */
  answered: number
  /** The answer was read to its end (not cut off with the connection). */
  ended: boolean
}

/**
 * Streams node writes `k0`, `k1`, ... (each with its number as `age`) in one
 * bulk request without end, reads the answers as they come, and calls `cut`
 * (which stops or kills the server) once `after` lines are answered.
 */
export async function bulkUntilCut(base: string, tenant: string, token: string, consent: string, after: number, cut: () => Promise<void>): Promise<CutShort> {
  let sent = 0
  async function* lines(): AsyncGenerator<string> {
    for (;;) {
      const i = sent++
      yield lineOf({ method: 'PUT', path: `nodes/core/customer/k${i}`, headers: { 'consent-reference': consent }, body: { name: `N${i}`, age: i } })
      if (i % 500 === 0) await new Promise((r) => setImmediate(r))
    }
  }
  const res = await request(`${base}/graph/v1/${encodeURIComponent(tenant)}/bulk`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body: Readable.from(lines()),
  })
  if (res.statusCode !== 200) throw new Error(`bulk answered ${res.statusCode}`)
  let answered = 0
  let ended = false
  let rest = ''
  let cutting: Promise<void> | undefined
  try {
    for await (const chunk of res.body) {
      const parts = (rest + (chunk as Buffer).toString()).split('\n')
      rest = parts.pop()!
      for (const p of parts) {
        // One answer per line and nothing else: anything but a 204 (a summary too) is wrong here.
        if ((JSON.parse(p) as Record<string, unknown>).status === 204) answered++
        else throw new Error(`line ${answered + 1} answered ${p}`)
      }
      if (answered >= after && cutting === undefined) cutting = cut()
    }
    ended = true
  } catch (err) {
    if (cutting === undefined) throw err
  }
  await cutting
  return { answered, ended }
}
