// The bench's world: 16 tenants (each with its own client-credentials client),
// a metamodel with a searchable `name` on core/customer, and the paths and
// bodies every scenario and the data load share.
import { writeFileSync } from 'node:fs'

export const TENANT_COUNT = 16
export const VIEW = 'platform.profile_graph_view'
export const MANAGE = 'platform.profile_graph_manage'
/** Names customers are given; `q=name:"Name k"` finds about customers/NAME_COUNT of a tenant's. */
export const NAME_COUNT = 64
export const HUB10 = 'hub10-'
export const HUB1000 = 'hub1000-'

export interface Tenant {
  index: number
  id: string
  clientId: string
  clientSecret: string
}

export const TENANTS: readonly Tenant[] = Array.from({ length: TENANT_COUNT }, (_, i) => {
  const n = String(i).padStart(2, '0')
  return { index: i, id: `bench-t${n}`, clientId: `bench-client-${n}`, clientSecret: `bench-secret-${n}` }
})

/** The bootstrap file of the bench's server: tenants, one client each, the metamodel. */
export const ADMIN_CLIENT = { id: 'bench-admin', secret: 'bench-admin-secret' }

/** The token request of a client: Basic auth, form body. */
export function basicTokenHeaders(clientId: string, secret: string): Record<string, string> {
  return {
    authorization: `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`,
    'content-type': 'application/x-www-form-urlencoded',
  }
}

export function bootstrapDoc(): object {
  const str = { type: 'string' }
  const int = { type: 'integer' }
  return {
    tenants: [...TENANTS.map((t) => ({ id: t.id, org: `${t.id}-org` })), { id: 'platform', org: 'platform-org' }],
    clients: [
      ...TENANTS.map((t) => ({
        client_id: t.clientId, client_secret: t.clientSecret, tenant: t.id,
        redirect_uris: ['http://127.0.0.1/callback'], scopes: [VIEW, MANAGE], grant_types: ['client_credentials'],
      })),
      // Creates, through the admin API, the clients with server-generated secrets that the token scenario uses.
      { client_id: ADMIN_CLIENT.id, client_secret: ADMIN_CLIENT.secret, tenant: 'platform', redirect_uris: [], scopes: ['platform.admin'], grant_types: ['client_credentials'] },
    ],
    metamodel: {
      '*': {
        nodes: {
          'core/customer': {
            owner: 'customer',
            properties: {
              name: { type: 'string', searchable: true }, age: int, email: str, city: str, segment: str,
              interests: { type: 'array' }, score: { type: 'number' }, notes: str,
            },
          },
          'core/product': {
            owner: 'tenant', open: true,
            properties: { title: { type: 'string', searchable: true }, price: { type: 'number' }, category: str },
          },
        },
        relations: {
          'core/customer/core/product/core/viewed': { properties: { views: int, lastSeen: int, channel: str } },
          'core/customer/core/customer/core/knows': { properties: { since: int } },
        },
      },
    },
  }
}

export function writeBootstrap(file: string): void {
  writeFileSync(file, JSON.stringify(bootstrapDoc(), null, 2))
}

// ---- paths -----------------------------------------------------------------

const enc = encodeURIComponent
const G = '/graph/v1'

export const nodePath = (tenant: string, type: 'customer' | 'product', id: string): string =>
  `${G}/${tenant}/nodes/core/${type}/${enc(id)}`
export const viewedPath = (tenant: string, customer: string, product: string, relId: string): string =>
  `${G}/${tenant}/relations/core/customer/${enc(customer)}/core/product/${enc(product)}/core/viewed/${enc(relId)}`
export const counterPath = (tenant: string, customer: string, product: string, relId: string, counter = 'views'): string =>
  `${G}/${tenant}/counters/core/customer/${enc(customer)}/core/product/${enc(product)}/core/viewed/${enc(relId)}/${counter}`
export const neighboursPath = (tenant: string, id: string): string => `${G}/${tenant}/neighbours/core/customer/${enc(id)}`
export const searchPath = (tenant: string, name: string): string =>
  `${G}/${tenant}/nodes/core/customer?q=${enc(`name:"${name}"`)}`
export const TOKEN_PATH = '/oauth2/v1/token'
export const consentsPath = (tenant: string): string => `${G}/${tenant}/consents`

export const customerName = (i: number): string => `Name ${i % NAME_COUNT}`

// ---- bodies ----------------------------------------------------------------

const CITIES = ['Berlin', 'Paris', 'Madrid', 'Rome', 'Vienna', 'Lisbon', 'Prague', 'Oslo']
const SEGMENTS = ['bronze', 'silver', 'gold', 'platinum']
const INTERESTS = ['running', 'books', 'travel', 'cooking', 'music', 'cinema', 'hiking', 'chess']

/** A customer's properties, padded with `notes` to `bytes` of JSON (the spec-sized ~250 B body). */
export function customerBody(i: number, name: string, bytes = 250): string {
  const props: Record<string, unknown> = {
    name,
    age: 18 + (i % 60),
    email: `customer-${i}@example.com`,
    city: CITIES[i % CITIES.length],
    segment: SEGMENTS[i % SEGMENTS.length],
    interests: [INTERESTS[i % 8], INTERESTS[(i + 3) % 8], INTERESTS[(i + 5) % 8]],
    score: Math.round(((i * 7919) % 1000)) / 1000,
  }
  const without = JSON.stringify(props).length + ',"notes":""'.length
  props.notes = 'n'.repeat(Math.max(0, bytes - without))
  return JSON.stringify(props)
}

export function productBody(j: number): string {
  return JSON.stringify({ title: `Product ${j}`, price: Math.round(((j * 37) % 10000)) / 100, category: `category-${j % 20}` })
}

export function viewedBody(n: number): string {
  return JSON.stringify({ lastSeen: 1_700_000_000_000 + n, channel: n % 2 === 0 ? 'web' : 'app' })
}

/** Headers of one tenant's requests. */
export interface TenantHeaders {
  read: Readonly<Record<string, string>>
  write: Readonly<Record<string, string>>
  /** A write without a body (the counter POST). */
  post: Readonly<Record<string, string>>
  /** The token request: Basic auth of the tenant's client. */
  token: Readonly<Record<string, string>>
}

/** One consent reference per tenant (see tokens.ts for where it comes from). */
export function tenantHeaders(t: Tenant, accessToken: string, consent: string): TenantHeaders {
  const authorization = `Bearer ${accessToken}`
  return {
    read: { authorization },
    write: { authorization, 'content-type': 'application/json', 'consent-reference': consent },
    post: { authorization, 'consent-reference': consent },
    token: basicTokenHeaders(t.clientId, t.clientSecret),
  }
}

export const knowsPath = (tenant: string, from: string, to: string, relId: string): string =>
  `${G}/${tenant}/relations/core/customer/${enc(from)}/core/customer/${enc(to)}/core/knows/${enc(relId)}`
