// Client-credentials tokens (RFC 6749 4.4): fetched on first use, kept, and
// renewed before they expire; concurrent callers share one token request.
import { errorOf } from './errors.js'
import type { TokenAnswer } from './types.js'

export interface ClientCredentials {
  clientId: string
  clientSecret: string
  /** Space-separated scopes to ask for; without it the client's own scopes. */
  scope?: string
  /** Renew this many seconds before the token expires (default 60, at most half its lifetime). */
  renewBeforeSeconds?: number
}

/** Where a call's bearer token comes from: a fixed string, or a function asked before each call. */
export type TokenSource = string | (() => Promise<string> | string)

/** application/x-www-form-urlencoded, as RFC 6749 2.3.1 wants client ids and secrets inside Basic. */
const formEncode = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+')

export class ClientCredentialsTokens {
  private current: { token: string; renewAt: number } | undefined
  private pending: Promise<string> | undefined

  constructor(
    private readonly tokenUrl: string,
    private readonly credentials: ClientCredentials,
    private readonly fetchImpl: typeof fetch,
    private readonly now: () => number = Date.now,
  ) {}

  /** A token valid for at least the renewal margin: the kept one, or a new one. */
  token(): Promise<string> {
    if (this.current !== undefined && this.now() < this.current.renewAt) return Promise.resolve(this.current.token)
    this.pending ??= this.request().finally(() => { this.pending = undefined })
    return this.pending
  }

  /** Forgets the kept token (the service refused it): the next call fetches a new one. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined
  }

  private async request(): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' })
    if (this.credentials.scope !== undefined) form.set('scope', this.credentials.scope)
    const basic = btoa(`${formEncode(this.credentials.clientId)}:${formEncode(this.credentials.clientSecret)}`)
    const started = this.now()
    const res = await this.fetchImpl(this.tokenUrl, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    })
    const text = await res.text()
    if (!res.ok) throw errorOf(res.status, text, res.headers.get('retry-after'))
    const answer = JSON.parse(text) as TokenAnswer
    const lifetimeMs = answer.expires_in * 1000
    const marginMs = Math.min((this.credentials.renewBeforeSeconds ?? 60) * 1000, lifetimeMs / 2)
    // from when it was asked for: the service's clock started no earlier
    this.current = { token: answer.access_token, renewAt: started + lifetimeMs - marginMs }
    return answer.access_token
  }
}
