// GET /oauth2/v1/tokeninfo?access_token=...: what a live access token holds
// (tenant, scopes, allowedServices, client, subject, expiry, session id).
// The token may also come as a Bearer header. An unknown, expired or revoked
// token is 401 with the error body.
import { TOKENINFO_QUERY } from './documented-forms'
import type { AuthServices } from '../services'
import type { AccessTokenRecord } from '../models/auth-store'
import { bearerToken } from '../helpers/bearer'
import { invalidRequest, invalidToken } from '../helpers/oauth-errors'
import type { OAuthMethod } from '../route-types'
import { plainScopes } from '../helpers/scopes'
import { NO_STORE } from '../helpers/token-response'
import { now } from '../../core/clock'
import { TokenInfo } from './answers'

export interface AllowedService {
  id: string
  name: string
  package: string
  scopes: string[]
}

/** AuthServices the token's tenant owns or subscribed to whose scopes the token carries. */
export function allowedServices(s: AuthServices, record: AccessTokenRecord): AllowedService[] {
  const scopes = new Set(plainScopes(record.scopes))
  const subscribed = new Set<string>()
  if (record.tenant !== undefined) {
    for (const value of s.oauth.subscriptions.ofTenant(record.tenant)) subscribed.add(value.package)
  }
  const out: AllowedService[] = []
  for (const pkg of s.oauth.packages.all()) {
    const reachable = record.tenant === undefined || pkg.provider.id === record.tenant || subscribed.has(pkg.id)
    if (!reachable) continue
    for (const service of pkg.includedServices) {
      const held = service.scopes.filter((sc) => scopes.has(sc))
      if (held.length > 0) out.push({ id: service.id, name: service.name, package: pkg.id, scopes: held })
    }
  }
  return out
}

export const tokeninfoEndpoint: OAuthMethod = {
  body: 'none',
  authenticates: 'bearer',
  documentedQuery: TOKENINFO_QUERY,
  answers: { 200: TokenInfo },
  errors: ['bad_request'],
  summary: 'What an access token carries: tenant, scopes, allowedServices',
  handle(s, ex) {
    const query = ex.query
    if (query.getAll('access_token').length > 1) throw invalidRequest('access_token must be given once')
    const token = query.get('access_token') ?? bearerToken(ex.headers.authorization)
    if (token === undefined || token === null || token === '') throw invalidRequest('access_token is required')
    const record = s.tokens.verify(token)
    if (record === undefined) throw invalidToken('the access token is invalid, expired or revoked')
    ex.json(200, JSON.stringify(tokenInfo(s, record)), NO_STORE)
  },
}

/** What /tokeninfo says of a live access token (introspection adds it to the RFC 7662 fields). */
export function tokenInfo(s: AuthServices, record: AccessTokenRecord): Record<string, unknown> {
  const t = now()
  return {
    active: true,
    tenant: record.tenant ?? null,
    org: record.org ?? null,
    scopes: record.scopes,
    scope: record.scopes.join(' '),
    allowedServices: allowedServices(s, record),
    client_id: record.client ?? null,
    client_authenticated: record.clientAuthenticated !== false,
    subject: record.sub ?? null,
    token_type: 'Bearer',
    expires_in: Math.max(0, Math.floor((record.exp - t) / 1000)),
    exp: Math.floor(record.exp / 1000),
    iat: record.iat === undefined ? null : Math.floor(record.iat / 1000),
    'platform-session-id': record.sessionId ?? null,
  }
}
