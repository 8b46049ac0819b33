// What every request of a tenant carries: a client-credentials access token
// (one per tenant, fetched once: each costs a scrypt verification of the
// bootstrap client's secret) and one consent reference per tenant. The
// reference is issued by POST /{tenant}/consents (DESIGN.md) when the service
// has that route; before it does (404), any non-empty reference is accepted,
// and a fixed one is used.
import { request } from 'undici'
import { TENANTS, TOKEN_PATH, consentsPath, tenantHeaders, type Tenant, type TenantHeaders } from './fixture'

export interface Credentials {
  headers: TenantHeaders[]
  /** 'issued' by the consents API, or 'fixed' when the service has none yet. */
  consents: 'issued' | 'fixed'
}

async function post(origin: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const res = await request(`${origin}${path}`, { method: 'POST', headers, body })
  const text = await res.body.text()
  let json: Record<string, unknown> = {}
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === 'object' && parsed !== null) json = parsed as Record<string, unknown>
  } catch {
    // not JSON: reported by the callers with the text
  }
  return { status: res.statusCode, text, json }
}

export async function fetchToken(origin: string, t: Tenant): Promise<string> {
  const r = await post(origin, TOKEN_PATH, { ...tenantHeaders(t, '', '').token }, 'grant_type=client_credentials')
  if (r.status !== 200 || typeof r.json.access_token !== 'string') {
    throw new Error(`token for ${t.clientId} failed: ${r.status} ${r.text.slice(0, 300)}`)
  }
  return r.json.access_token
}

async function consentReference(origin: string, t: Tenant, token: string): Promise<string | undefined> {
  const r = await post(origin, consentsPath(t.id), { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    JSON.stringify({ subject: `bench-subject-${t.id}` }))
  if (r.status === 404 || r.status === 405) return undefined
  if ((r.status === 201 || r.status === 200) && typeof r.json.consentReference === 'string') return r.json.consentReference
  throw new Error(`POST ${consentsPath(t.id)} failed: ${r.status} ${r.text.slice(0, 300)}`)
}

/** Headers for every tenant, in TENANTS order. */
export async function fetchCredentials(origin: string): Promise<Credentials> {
  const tokens = await Promise.all(TENANTS.map((t) => fetchToken(origin, t)))
  const refs = await Promise.all(TENANTS.map((t, i) => consentReference(origin, t, tokens[i]!)))
  const issued = refs.every((r) => r !== undefined)
  return {
    headers: TENANTS.map((t, i) => tenantHeaders(t, tokens[i]!, refs[i] ?? `consent-${t.id}`)),
    consents: issued ? 'issued' : 'fixed',
  }
}
