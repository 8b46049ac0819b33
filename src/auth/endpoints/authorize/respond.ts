// Answers of /authorize that leave for the client: always to the exact,
// registered redirect URI the request was checked against (never an open
// redirect). Success: the code in the query (with state and iss, RFC 9207)
// or the tokens in the fragment. Errors: error, error_description and state
// in the fragment and, for the code flow, in the query as well.
import type { Exchange, ResponseHeaders } from '../../../http/exchange'
import type { RedirectTarget } from './request'

function withQuery(uri: string, params: URLSearchParams): string {
  return `${uri}${uri.includes('?') ? '&' : '?'}${params.toString()}`
}

export function successLocation(target: RedirectTarget, values: Record<string, string>, issuer: string): string {
  const params = new URLSearchParams(values)
  if (target.state !== undefined) params.set('state', target.state)
  if (target.responseType === 'code') {
    params.set('iss', issuer)
    return withQuery(target.redirectUri, params)
  }
  return `${target.redirectUri}#${params.toString()}`
}

export function errorLocation(target: RedirectTarget, error: string, description: string, issuer: string): string {
  const params = new URLSearchParams({ error, error_description: description })
  if (target.state !== undefined) params.set('state', target.state)
  const fragment = `#${params.toString()}`
  if (target.responseType !== 'code') return `${target.redirectUri}${fragment}`
  params.set('iss', issuer)
  return `${withQuery(target.redirectUri, params)}${fragment}`
}

/** 303 after a form post (the browser follows with GET), 302 otherwise. */
export function redirect(ex: Exchange, location: string, extra: ResponseHeaders = {}): void {
  ex.empty(ex.method === 'POST' ? 303 : 302, {
    location, 'cache-control': 'no-store', pragma: 'no-cache', 'referrer-policy': 'no-referrer', ...extra,
  })
}
