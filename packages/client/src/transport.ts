// One HTTP exchange with the service: the bearer token, the error body as a
// ProfileGraphError, and retries. Only idempotent methods (GET, HEAD, PUT,
// DELETE) are retried, on 429, 503 and 507, after the Retry-After the
// service names (or a growing wait without one); a POST (a counter, a
// consent) is sent once. A 401 with a token that may have
// expired is retried once with a new token, whatever the method: the
// service refuses the token before it applies anything.
import { errorOf, ProfileGraphError } from './errors.js'
import type { ClientCredentialsTokens } from './token.js'

export type HttpMethod = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'

const IDEMPOTENT: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD', 'PUT', 'DELETE'])
const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503, 507])

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0: none). */
  retries?: number
  /** The longest wait before a retry; a longer Retry-After is not waited for, the error is thrown (default 30 s). */
  maxDelayMs?: number
  /** The first wait when the answer names none, doubled each time (default 500 ms). */
  baseDelayMs?: number
}

export interface Exchange {
  method: HttpMethod
  /** The path and query after the base URL, already encoded. */
  path: string
  headers?: Record<string, string>
  /** A JSON body (serialised here), a text body, or a stream (never retried). */
  json?: unknown
  body?: string | ReadableStream<Uint8Array>
  signal?: AbortSignal
  /** A POST whose refusal (429, 503, 507) applied nothing, so it is retried as an idempotent call is (a bulk request). */
  refusedAppliesNothing?: boolean
}

/** The token a call carries: one fixed, or from a token source. */
export interface Bearer {
  token(): Promise<string>
  invalidate(token: string): void
  /** Whether asking again may give another token. */
  readonly renewable: boolean
}

export function fixedBearer(source: string | (() => Promise<string> | string)): Bearer {
  return { token: async () => (typeof source === 'string' ? source : await source()), invalidate: () => undefined, renewable: typeof source !== 'string' }
}

export function tokensBearer(tokens: ClientCredentialsTokens): Bearer {
  return { token: () => tokens.token(), invalidate: (t) => tokens.invalidate(t), renewable: true }
}

/** Waits `ms`, or rejects when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    const onAbort = (): void => { clearTimeout(timer); reject(signal?.reason) }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

// fetch's option for a streamed request body (not in every lib's RequestInit yet).
type StreamingInit = RequestInit & { duplex?: 'half' }

export class Transport {
  private readonly retries: number
  private readonly maxDelayMs: number
  private readonly baseDelayMs: number

  constructor(readonly baseUrl: string, private readonly bearer: Bearer, private readonly fetchImpl: typeof fetch, retry: RetryOptions = {}) {
    this.retries = retry.retries ?? 3
    this.maxDelayMs = retry.maxDelayMs ?? 30_000
    this.baseDelayMs = retry.baseDelayMs ?? 500
  }

  /** The bearer token calls carry now (for the event stream's upgrade). */
  token(): Promise<string> {
    return this.bearer.token()
  }

  /** Forgets a token the service refused. */
  invalidate(token: string): void {
    this.bearer.invalidate(token)
  }

  /** Sends the exchange and answers its 2xx response, body unread; any other answer is thrown as a ProfileGraphError. */
  async send(ex: Exchange): Promise<Response> {
    const retriable = (IDEMPOTENT.has(ex.method) || ex.refusedAppliesNothing === true) && !(ex.body instanceof ReadableStream)
    // a second token only where one can come: client credentials, or a token function
    let renewed = !this.bearer.renewable || ex.body instanceof ReadableStream
    for (let retried = 0; ;) {
      const token = await this.bearer.token()
      const res = await this.attempt(ex, token)
      if (res.ok) return res
      const error = errorOf(res.status, await res.text(), res.headers.get('retry-after'))
      if (res.status === 401 && !renewed) {
        renewed = true
        this.bearer.invalidate(token)
        continue
      }
      const wait = error.retryAfter !== undefined ? error.retryAfter * 1000 : this.baseDelayMs * 2 ** retried
      if (!retriable || !RETRIED_STATUSES.has(res.status) || retried >= this.retries || wait > this.maxDelayMs) throw error
      retried++
      await sleep(wait, ex.signal)
    }
  }

  private async attempt(ex: Exchange, token: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...ex.headers }
    let body: string | ReadableStream<Uint8Array> | undefined = ex.body
    if (ex.json !== undefined) {
      body = JSON.stringify(ex.json)
      headers['content-type'] ??= 'application/json'
    }
    const init: StreamingInit = { method: ex.method, headers, body, signal: ex.signal }
    if (body instanceof ReadableStream) init.duplex = 'half'
    try {
      return await this.fetchImpl(`${this.baseUrl}${ex.path}`, init)
    } catch (e) {
      if (ex.signal?.aborted) throw e
      throw new ProfileGraphError({ status: 0, type: 'network_error', message: `${ex.method} ${ex.path}: ${(e as Error).message}`, cause: e })
    }
  }

  /** The answer's JSON body. */
  async json<T>(ex: Exchange): Promise<T> {
    const res = await this.send({ ...ex, headers: { accept: 'application/json', ...ex.headers } })
    return await res.json() as T
  }

  /** Sends an exchange whose answer has no body worth reading (204). */
  async none(ex: Exchange): Promise<void> {
    const res = await this.send(ex)
    await res.body?.cancel()
  }
}
