// The token response of spec section 2 (RFC 6749 5.1), never cached.
import type { Exchange } from '../../http/exchange'
import type { ClientRecord } from '../models/auth-store'
import { unauthorizedClient } from './oauth-errors'

export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  scope: string
  refresh_token?: string
  id_token?: string
}

export function sendTokenResponse(ex: Exchange, body: TokenResponse): void {
  ex.json(200, JSON.stringify(body), NO_STORE)
}

export function requireGrantType(client: ClientRecord, grantType: string): void {
  if (!client.grant_types.includes(grantType)) {
    throw unauthorizedClient(`client "${client.client_id}" may not use the ${grantType} grant`)
  }
}
