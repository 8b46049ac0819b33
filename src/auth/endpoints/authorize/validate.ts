// The authorization request pipeline: the client and its redirect URI
// first (a failure is a bad request: nothing can be trusted to receive it),
// then every other check, whose failures go back to the redirect URI.
import { ApiError } from '../../../core/errors'
import type { Exchange } from '../../../http/exchange'
import type { Clients } from '../../models/clients'
import { SESSION_ID_PARAM, sessionIdOf } from '../../helpers/session-id'
import {
  checkClient, checkDisplay, checkMaxAge, checkNonce, checkParameters, checkPkce, checkPrompt, checkProvider,
  checkRedirectUri, checkRequestObjects, checkResponseMode, checkResponseType, checkScope, checkUpstream, parseResponseType,
} from './checks'
import { RedirectError, type AuthorizationRequest, type RedirectTarget } from './request'

/** The fields of the sign-in and consent forms, which are not authorization parameters. */
export const FORM_FIELDS = ['username', 'password', 'csrf', 'consent'] as const

export function authorizationParams(all: URLSearchParams): URLSearchParams {
  const params = new URLSearchParams(all)
  for (const f of FORM_FIELDS) params.delete(f)
  return params
}

/** `isCustom`: whether an id names a custom identity provider (platform_id_provider). */
export function validateAuthorizationRequest(
  clients: Clients, ex: Exchange, params: URLSearchParams, isCustom: (id: string) => boolean = () => false,
): AuthorizationRequest {
  const client = checkClient(clients, params)
  const { redirectUri, given } = checkRedirectUri(client, params)
  const states = params.getAll('state')
  const target: RedirectTarget = {
    redirectUri, state: states.length === 1 ? states[0] : undefined, responseType: parseResponseType(params.get('response_type')),
  }
  try {
    checkParameters(params)
    checkRequestObjects(params)
    const responseType = checkResponseType(client, params)
    checkResponseMode(params, responseType)
    const upstream = checkUpstream(params, isCustom)
    const provider = upstream === undefined ? checkProvider(params) : 'idp_default'
    return {
      ...target,
      client,
      redirectUriGiven: given,
      responseType,
      provider,
      upstream,
      display: checkDisplay(params, provider),
      ...checkScope(params, responseType),
      ...checkPkce(params, client, responseType),
      nonce: checkNonce(params, responseType),
      ...checkPrompt(params),
      maxAge: checkMaxAge(params),
      idTokenHint: params.get('id_token_hint') ?? undefined,
      sessionId: sessionIdOf(params.get(SESSION_ID_PARAM) ?? undefined, ex.headers['platform-session-id']),
      params,
    }
  } catch (err) {
    if (err instanceof ApiError && err.oauth !== undefined) throw new RedirectError(target, err.oauth.error, err.oauth.error_description)
    throw err
  }
}
