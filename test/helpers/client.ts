// A small undici client for the HTTP tests: JSON in, status/headers/body out.
import { request, type Dispatcher } from 'undici'

export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: <T = unknown>() => T
}

export type Headers = Record<string, string>

export async function call(method: Dispatcher.HttpMethod, url: string, headers: Headers = {}, body?: string | Buffer): Promise<Answer> {
  const res = await request(url, { method, headers, body })
  const text = await res.body.text()
  return {
    status: res.statusCode,
    headers: res.headers,
    text,
    json: <T>() => JSON.parse(text) as T,
  }
}

/** Calls against one tenant of the graph service with one token. */
export class Graph {
  constructor(readonly base: string, readonly tenant: string, readonly token: string, readonly consent = 'consent-1') {}

  url(path: string): string {
    return `${this.base}/graph/v1/${encodeURIComponent(this.tenant)}/${path}`
  }

  private auth(extra: Headers = {}): Headers {
    return { authorization: `Bearer ${this.token}`, ...extra }
  }

  get(path: string, headers: Headers = {}): Promise<Answer> {
    return call('GET', this.url(path), this.auth(headers))
  }
  head(path: string): Promise<Answer> {
    return call('HEAD', this.url(path), this.auth())
  }
  delete(path: string): Promise<Answer> {
    return call('DELETE', this.url(path), this.auth())
  }
  put(path: string, body: unknown, headers: Headers = {}): Promise<Answer> {
    return call('PUT', this.url(path), this.auth({ 'content-type': 'application/json', 'consent-reference': this.consent, ...headers }), JSON.stringify(body))
  }
  post(path: string, headers: Headers = {}): Promise<Answer> {
    return call('POST', this.url(path), this.auth({ 'consent-reference': this.consent, ...headers }))
  }
}

export const enc = encodeURIComponent

/** Runs `task` for 0..n-1 with at most `concurrency` in flight. */
export async function pool<T>(n: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) {
      const i = next++
      out[i] = await task(i)
    }
  }))
  return out
}

/** Creates a consent reference for `subject` with a manage-scope token. */
export async function createConsent(base: string, tenant: string, token: string, subject: string): Promise<string> {
  const res = await call('POST', `${base}/graph/v1/${encodeURIComponent(tenant)}/consents`,
    { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, JSON.stringify({ subject }))
  if (res.status !== 201) throw new Error(`consent creation failed: ${res.status} ${res.text}`)
  return res.json<{ consentReference: string }>().consentReference
}
