// POST /oauth2/v1/introspect (RFC 7662): what a token is, for the client
// that asks. The caller authenticates like at the token endpoint (a public
// client by client_id alone). An access token is shown to the client it was
// issued to and, when the caller authenticated with its secret (a resource
// server), to clients of the token's tenant; a refresh token only to its own
// client. Anything else, and every unknown, expired or revoked token, is
// {"active": false}. An active access token carries the RFC 7662 fields and
// those of /tokeninfo.
import type { Exchange } from '../../http/exchange'
import { requestSource } from '../../net/client-source'
import type { AccessTokenRecord, ClientRecord, RefreshTokenRecord } from '../models/auth-store'
import { oauthMethod, type AuthServices } from '../services'
import { tokenClient, type CallingClient } from '../helpers/client-authentication'
import { requireClientOrigin } from '../helpers/client-cors'
import { invalidRequest, single } from '../helpers/oauth-errors'
import { NO_STORE } from '../helpers/token-response'
import { tokenInfo } from './tokeninfo'
import { Introspection } from './answers'

const INACTIVE = JSON.stringify({ active: false })

type Found = { kind: 'access'; record: AccessTokenRecord } | { kind: 'refresh'; record: RefreshTokenRecord }

/** The live token, looked up first where the hint points (RFC 7662 2.1: the hint only speeds the search). */
function find(s: AuthServices, token: string, hint: string | undefined): Found | undefined {
  const access = (): Found | undefined => {
    const record = s.tokens.verify(token)
    return record === undefined ? undefined : { kind: 'access', record }
  }
  const refresh = (): Found | undefined => {
    const found = s.oauth.refreshTokens.find(token)
    return found === undefined ? undefined : { kind: 'refresh', record: found.record }
  }
  return hint === 'refresh_token' ? refresh() ?? access() : access() ?? refresh()
}

function visible(caller: CallingClient<ClientRecord>, found: Found): boolean {
  if (found.record.client === caller.client.client_id) return true
  return found.kind === 'access' && caller.authenticated && found.record.tenant !== undefined && found.record.tenant === caller.client.tenant
}

function activeBody(s: AuthServices, found: Found): Record<string, unknown> {
  const { record } = found
  const username = record.sub === undefined ? undefined : s.oauth.users.find(record.sub)?.username
  const base = found.kind === 'access'
    ? tokenInfo(s, found.record)
    : { active: true, tenant: record.tenant ?? null, scope: record.scopes.join(' '), scopes: record.scopes, client_id: record.client, token_type: 'refresh_token', iat: Math.floor(found.record.created / 1000) }
  const out: Record<string, unknown> = { ...base, iss: s.oauth.issuer, sub: record.sub, username }
  // RFC 7662 members are left out rather than null when the token has none.
  for (const k of ['client_id', 'iat', 'sub', 'username']) if (out[k] === null || out[k] === undefined) delete out[k]
  return out
}

async function introspect(s: AuthServices, ex: Exchange, form: URLSearchParams): Promise<void> {
  requireClientOrigin(s, ex, form)
  const token = single(form, 'token')
  if (token === undefined || token === '') throw invalidRequest('token is required')
  const caller = await tokenClient(s.oauth.clients, s.oauth.secretChecks, ex.headers.authorization, form, () => requestSource(ex, s.trustProxy))
  const found = find(s, token, single(form, 'token_type_hint'))
  ex.json(200, found === undefined || !visible(caller, found) ? INACTIVE : JSON.stringify(activeBody(s, found)), NO_STORE)
}

export const introspectEndpoint = oauthMethod({
  body: 'form',
  authenticates: 'client',
  answers: { 200: Introspection },
  errors: ['forbidden', 'too_many_requests'],
  summary: 'Token introspection (RFC 7662)',
  handle(s, ex, { body }) {
    introspect(s, ex, new URLSearchParams(body.toString('utf8'))).catch((err: unknown) => ex.error(err))
  },
})
