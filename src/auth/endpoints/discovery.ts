// GET /oauth2/v1/.well-known/openid-configuration (OpenID Connect Discovery
// 1.0, RFC 8414) and the JWKS it points at. The same document is the RFC 8414
// metadata at /oauth2/v1/.well-known/oauth-authorization-server and, in the
// RFC's path form, at /.well-known/oauth-authorization-server<issuer path>.
import type { OAuthMethod } from '../route-types'
import { GRANT_TYPES } from '../helpers/client-rules'
import { NO_TENANT_SCOPE, OIDC_SCOPES } from '../helpers/scopes'
import { Discovery, Jwks } from './answers'

export const JWKS_PATH = '.well-known/jwks.json'

export function discoveryDocument(issuer: string, serviceScopes: readonly string[]): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    jwks_uri: `${issuer}/${JWKS_PATH}`,
    revocation_endpoint: `${issuer}/revoke`,
    introspection_endpoint: `${issuer}/introspect`,
    end_session_endpoint: `${issuer}/end_session`,
    tokeninfo_endpoint: `${issuer}/tokeninfo`,
    refresh_tokens_endpoint: `${issuer}/refreshtokens`,
    response_types_supported: ['code', 'token', 'id_token token'],
    response_modes_supported: ['query', 'fragment'],
    grant_types_supported: GRANT_TYPES,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256', 'plain'],
    scopes_supported: [...OIDC_SCOPES, NO_TENANT_SCOPE, ...serviceScopes],
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'email', 'email_verified', 'preferred_username'],
    display_values_supported: ['page', 'popup'],
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    platform_id_providers_supported: ['idp_default', 'idp_legacy'],
  }
}

/**
 * The issuer-relative path of an RFC 8414 path-form request (section 3.1:
 * the well-known segments go between the host and the issuer's path), or
 * undefined when `segments` name another issuer or document.
 */
export function rootWellKnownPath(issuer: string, segments: readonly string[]): string[] | undefined {
  const issuerPath = new URL(issuer).pathname.split('/').filter((p) => p !== '')
  const [, name, ...rest] = segments
  if (name !== 'oauth-authorization-server' || rest.join('/') !== issuerPath.join('/')) return undefined
  return ['.well-known', name]
}

const CACHE = { 'cache-control': 'public, max-age=300' }

export const discoveryEndpoint: OAuthMethod = {
  body: 'none',
  answers: { 200: Discovery },
  summary: 'OpenID Connect Discovery / RFC 8414 metadata',
  handle(s, ex) {
    const scopes = new Set<string>()
    for (const value of s.oauth.packages.all()) for (const service of value.includedServices) for (const sc of service.scopes) scopes.add(sc)
    ex.json(200, JSON.stringify(discoveryDocument(s.oauth.issuer, [...scopes].sort())), CACHE)
  },
}

/** Keys may change at a rotation: clients refetch on an unknown kid, and may cache a minute. */
export const jwksEndpoint: OAuthMethod = {
  body: 'none',
  answers: { 200: Jwks },
  summary: 'The public keys ID tokens are signed with (JWKS)',
  handle(s, ex) {
    ex.json(200, JSON.stringify(s.oauth.keys.jwks()), { 'cache-control': 'public, max-age=60' })
  },
}
