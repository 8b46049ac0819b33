// What every request of a tenant carries: a client-credentials access token
// (one per tenant, fetched once: each costs a scrypt verification of the
// bootstrap client's secret) and one consent reference per tenant. The
// reference is issued by POST /{tenant}/consents (docs/design/contracts.md). A build
// from before consent references answers that with 404 and accepted any
// non-empty reference; against one, a fixed reference is used.
import { request } from 'undici'
import { ADMIN_CLIENT, TENANTS, TOKEN_PATH, basicTokenHeaders, consentsPath, tenantHeaders, type Tenant, type TenantHeaders } from './fixture'
import { sleep } from './wait'

export interface Credentials {
  headers: TenantHeaders[]
  /** 'generated': the token scenario's clients have server-generated (SHA-256) secrets from the admin API. */
  tokenClients: 'generated' | 'bootstrap'
  /** 'issued' by the consents API, or 'fixed' against a build without one. */
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
  let r = await post(origin, TOKEN_PATH, { ...tenantHeaders(t, '', '').token }, 'grant_type=client_credentials')
  // On a busy machine the password-check queue refuses with 503 at start-up: wait and retry a few times.
  for (let retry = 1; r.status === 503 && retry <= 60; retry++) {
    await sleep(Math.min(2_000, 200 * retry))
    r = await post(origin, TOKEN_PATH, { ...tenantHeaders(t, '', '').token }, 'grant_type=client_credentials')
  }
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

/** A client of the tenant with a server-generated secret (checked with SHA-256), made with the admin API. */
async function generatedClient(origin: string, adminToken: string, t: Tenant): Promise<Record<string, string> | undefined> {
  const r = await post(origin, '/oauth2/v1/admin/clients', { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    JSON.stringify({ client_id: `${t.clientId}-generated`, tenant: t.id, redirect_uris: [], scopes: ['platform.profile_graph_view'], grant_types: ['client_credentials'] }))
  if (r.status !== 201 || typeof r.json.client_secret !== 'string') return undefined
  return basicTokenHeaders(`${t.clientId}-generated`, r.json.client_secret)
}

/** A token and a consent reference for each of `tenants`, in order. */
export async function tenantCredentials(origin: string, tenants: readonly Tenant[]): Promise<Pick<Credentials, 'headers' | 'consents'>> {
  // One at a time: the server bounds the password checks (scrypt) waiting at once and answers 503 beyond that.
  const tokens: string[] = []
  for (const t of tenants) tokens.push(await fetchToken(origin, t))
  const refs = await Promise.all(tenants.map((t, i) => consentReference(origin, t, tokens[i]!)))
  return {
    headers: tenants.map((t, i) => tenantHeaders(t, tokens[i]!, refs[i] ?? `consent-${t.id}`)),
    consents: refs.every((r) => r !== undefined) ? 'issued' : 'fixed',
  }
}

/** Headers for every tenant, in TENANTS order. */
export async function fetchCredentials(origin: string): Promise<Credentials> {
  const { headers, consents } = await tenantCredentials(origin, TENANTS)
  const admin = await post(origin, TOKEN_PATH, basicTokenHeaders(ADMIN_CLIENT.id, ADMIN_CLIENT.secret), 'grant_type=client_credentials&scope=platform.admin')
  const adminToken = typeof admin.json.access_token === 'string' ? admin.json.access_token : undefined
  const generated = adminToken === undefined ? [] : await Promise.all(TENANTS.map((t) => generatedClient(origin, adminToken, t)))
  const allGenerated = generated.length === TENANTS.length && generated.every((g) => g !== undefined)
  return {
    headers: headers.map((h, i) => (allGenerated ? { ...h, token: generated[i]! } : h)),
    consents,
    tokenClients: allGenerated ? 'generated' : 'bootstrap',
  }
}
