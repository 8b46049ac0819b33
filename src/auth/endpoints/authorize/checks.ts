// The checks of an authorization request, one small function each, in the
// order the pipeline (validate.ts) runs them. The first two decide whether
// the redirect URI can be trusted and fail with a bad request; the others
// fail with an OAuth error that is sent to the redirect URI.
import { ApiError } from '../../../core/errors'
import type { ClientRecord } from '../../models/auth-store'
import type { Clients } from '../../models/clients'
import { nameTooLong } from '../../../model/name-limit'
import { invalidRequest, oauthError, unauthorizedClient } from '../../helpers/oauth-errors'
import { OPENID_SCOPE, parseScopeRequest, splitScope, type ScopeRequest } from '../../helpers/scopes'
import type { Display, Provider, ResponseType } from './request'

const MAX_PARAM_LENGTH = 4096

const badRequest = (description: string): ApiError =>
  new ApiError('bad_request', description, { oauth: { error: 'invalid_request', error_description: description } })

/** One value at most; before the redirect URI is trusted a duplicate is a bad request. */
function one(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name)
  if (all.length > 1) throw badRequest(`${name} must be given once`)
  return all[0]
}

export function checkClient(clients: Clients, params: URLSearchParams): ClientRecord {
  const clientId = one(params, 'client_id')
  if (clientId === undefined || clientId === '') throw badRequest('client_id is required')
  const long = nameTooLong('client_id', clientId)
  if (long !== undefined) throw badRequest(long)
  const client = clients.find(clientId)
  if (client === undefined) throw badRequest(`unknown client_id "${clientId}"`)
  return client
}

/** Exact match with a registered URI; without redirect_uri the client must have exactly one. */
export function checkRedirectUri(client: ClientRecord, params: URLSearchParams): { redirectUri: string; given: boolean } {
  const given = one(params, 'redirect_uri')
  if (given === undefined) {
    if (client.redirect_uris.length === 1) return { redirectUri: client.redirect_uris[0]!, given: false }
    throw badRequest(client.redirect_uris.length === 0
      ? `client "${client.client_id}" has no registered redirect URI`
      : `redirect_uri is required: client "${client.client_id}" has several registered`)
  }
  if (!client.redirect_uris.includes(given)) throw badRequest(`redirect_uri "${given}" is not registered for client "${client.client_id}"`)
  return { redirectUri: given, given: true }
}

/** RFC 6749 3.1: no parameter twice; and no parameter longer than a URL can sensibly carry. */
export function checkParameters(params: URLSearchParams): void {
  const seen = new Set<string>()
  for (const [name, value] of params) {
    if (seen.has(name)) throw invalidRequest(`${name} must be given once`)
    seen.add(name)
    if (value.length > MAX_PARAM_LENGTH) throw invalidRequest(`${name} is longer than ${MAX_PARAM_LENGTH} characters`)
  }
}

export function parseResponseType(value: string | null): ResponseType | undefined {
  const parts = splitScope(value).sort()
  const key = parts.join(' ')
  if (key === 'code') return 'code'
  if (key === 'token') return 'token'
  if (key === 'id_token token') return 'id_token token'
  return undefined
}

export function checkResponseType(client: ClientRecord, params: URLSearchParams): ResponseType {
  const raw = params.get('response_type')
  if (raw === null || raw === '') throw invalidRequest('response_type is required')
  const responseType = parseResponseType(raw)
  if (responseType === undefined) {
    throw oauthError('unsupported_response_type', `response_type "${raw}" is not supported: use code, token or "id_token token"`)
  }
  const grant = responseType === 'code' ? 'authorization_code' : 'implicit'
  if (!client.grant_types.includes(grant)) throw unauthorizedClient(`client "${client.client_id}" may not use response_type "${raw}"`)
  return responseType
}

/** Only the default response mode of each flow: query for code, fragment for tokens. */
export function checkResponseMode(params: URLSearchParams, responseType: ResponseType): void {
  const mode = params.get('response_mode')
  if (mode === null) return
  const expected = responseType === 'code' ? 'query' : 'fragment'
  if (mode !== expected) throw invalidRequest(`response_mode "${mode}" is not supported for response_type "${responseType}": use ${expected}`)
}

export function checkProvider(params: URLSearchParams): Provider {
  const provider = params.get('platform_id_provider') ?? 'idp_default'
  if (provider === 'idp_default' || provider === 'idp_legacy') return provider
  throw invalidRequest(`unknown identity provider platform_id_provider="${provider}": this server offers idp_default and idp_legacy (deprecated)`)
}

/** The id of a custom identity provider (federation) that platform_id_provider names, if it does. */
export function checkUpstream(params: URLSearchParams, isCustom: (id: string) => boolean): string | undefined {
  const provider = params.get('platform_id_provider')
  return provider !== null && provider !== 'idp_default' && provider !== 'idp_legacy' && isCustom(provider) ? provider : undefined
}

/** idp_default shows a page whatever is asked; idp_legacy also knows the deprecated popup. */
export function checkDisplay(params: URLSearchParams, provider: Provider): Display {
  return provider === 'idp_legacy' && params.get('display') === 'popup' ? 'popup' : 'page'
}

/** The scope syntax and tenant-scope rules; `id_token token` implies openid. */
export function checkScope(params: URLSearchParams, responseType: ResponseType): { scope: string | null; scopeRequest: ScopeRequest } {
  let scope = params.get('scope')
  if (responseType === 'id_token token' && !splitScope(scope).includes(OPENID_SCOPE)) scope = [scope ?? '', OPENID_SCOPE].join(' ').trim()
  return { scope, scopeRequest: parseScopeRequest(scope, responseType !== 'code') }
}

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/
const PLAIN_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/

/** RFC 7636; a public client must use PKCE in the code flow. */
export function checkPkce(
  params: URLSearchParams, client: ClientRecord, responseType: ResponseType,
): { codeChallenge: string | undefined; codeChallengeMethod: 'S256' | 'plain' | undefined } {
  if (responseType !== 'code') return { codeChallenge: undefined, codeChallengeMethod: undefined }
  const challenge = params.get('code_challenge') ?? undefined
  const method = params.get('code_challenge_method') ?? undefined
  if (challenge === undefined) {
    if (method !== undefined) throw invalidRequest('code_challenge_method was sent without code_challenge')
    if (client.secret === undefined) throw invalidRequest(`client "${client.client_id}" is public: PKCE is required (send code_challenge)`)
    return { codeChallenge: undefined, codeChallengeMethod: undefined }
  }
  const m = method ?? 'plain'
  if (m !== 'S256' && m !== 'plain') throw invalidRequest(`code_challenge_method "${m}" is not supported: use S256 or plain`)
  if (!(m === 'S256' ? S256_CHALLENGE : PLAIN_CHALLENGE).test(challenge)) {
    throw invalidRequest(m === 'S256'
      ? 'code_challenge must be BASE64URL(SHA256(code_verifier)): 43 characters'
      : 'code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~')
  }
  return { codeChallenge: challenge, codeChallengeMethod: m }
}

export function checkNonce(params: URLSearchParams, responseType: ResponseType): string | undefined {
  const nonce = params.get('nonce') ?? undefined
  if (responseType === 'id_token token' && (nonce === undefined || nonce === '')) {
    throw invalidRequest('nonce is required for response_type "id_token token"')
  }
  return nonce === '' ? undefined : nonce
}

export interface PromptRequest {
  /** none: never show a page; login: sign in again (select_account too: the sign-in form is where the account is chosen) */
  prompt: 'none' | 'login' | undefined
  /** consent: the user approves the grant on a page before it is given */
  consent: boolean
}

export function checkPrompt(params: URLSearchParams): PromptRequest {
  const values = splitScope(params.get('prompt'))
  for (const v of values) {
    if (!['none', 'login', 'consent', 'select_account'].includes(v)) throw invalidRequest(`prompt "${v}" is not supported`)
  }
  if (values.includes('none')) {
    if (values.length > 1) throw invalidRequest('prompt=none cannot be combined with other values')
    return { prompt: 'none', consent: false }
  }
  return { prompt: values.includes('login') || values.includes('select_account') ? 'login' : undefined, consent: values.includes('consent') }
}

/** Request objects (OIDC Core 6) are not supported: say so rather than ignore them. */
export function checkRequestObjects(params: URLSearchParams): void {
  if (params.has('request')) throw oauthError('request_not_supported', 'the request parameter (a request object) is not supported; send the parameters themselves')
  if (params.has('request_uri')) throw oauthError('request_uri_not_supported', 'request_uri is not supported; send the parameters themselves')
}

export function checkMaxAge(params: URLSearchParams): number | undefined {
  const raw = params.get('max_age')
  if (raw === null) return undefined
  if (!/^\d{1,9}$/.test(raw)) throw invalidRequest('max_age must be a whole number of seconds')
  return Number(raw)
}
