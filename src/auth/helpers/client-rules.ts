// What a client registration may hold (the admin API and the bootstrap file
// use the same rules): redirect URIs that are absolute https URLs, or http
// on a loopback address (development and tests), without a fragment or
// credentials; known grant types; public clients (no secret) only for the
// browser flows; extra CORS origins that are origins (src/net/origin.ts).
import { originProblem } from '../../net/origin'

export const GRANT_TYPES = ['authorization_code', 'implicit', 'refresh_token', 'client_credentials', 'password'] as const
export type GrantType = (typeof GRANT_TYPES)[number]

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

/** Why `uri` cannot be a redirect URI, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return `"${uri}" is not an absolute URL`
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    return `"${uri}" must use https (http only on a loopback address)`
  }
  if (uri.includes('#')) return `"${uri}" must not have a fragment`
  if (url.username !== '' || url.password !== '') return `"${uri}" must not hold credentials`
  return undefined
}

export interface ClientShape {
  public: boolean
  redirect_uris: string[]
  grant_types: string[]
  scopes: string[]
  cors_origins?: string[]
}

/** Why a client registration is not acceptable, or undefined. */
export function clientProblem(c: ClientShape): string | undefined {
  for (const uri of c.redirect_uris) {
    const problem = redirectUriProblem(uri)
    if (problem !== undefined) return `redirect_uris: ${problem}`
  }
  for (const origin of c.cors_origins ?? []) {
    const problem = originProblem(origin)
    if (problem !== undefined) return `cors_origins: ${problem}`
  }
  for (const g of c.grant_types) {
    if (!(GRANT_TYPES as readonly string[]).includes(g)) return `grant_types: "${g}" is not one of ${GRANT_TYPES.join(', ')}`
  }
  if (c.public && c.grant_types.includes('client_credentials')) return 'grant_types: a public client (no secret) cannot use client_credentials'
  const browser = c.grant_types.includes('authorization_code') || c.grant_types.includes('implicit')
  if (browser && c.redirect_uris.length === 0) return 'redirect_uris: authorization_code and implicit need at least one redirect URI'
  for (const s of c.scopes) if (s === '' || /\s/.test(s)) return `scopes: "${s}" must be one word`
  return undefined
}
