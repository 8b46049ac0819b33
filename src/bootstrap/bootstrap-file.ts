// Reads and validates the bootstrap file of docs/contracts.md. Every key is optional;
// a malformed file stops the start with a message naming the bad path.
import { readFileSync } from 'node:fs'
import { MAX_NAME_CHARS } from '../model/name-limit'
import { ConfigError } from '../config'
import { MetamodelDoc, PROPERTY_TYPES, PropertyDef, PropertyType, TenantMetamodel, TypeDef } from '../model/metamodel'

export interface TenantDecl { id: string; org: string }
export interface ServiceDecl {
  id: string
  name: string
  scopes: string[]
  /** where the gateway forwards /gateway/{package}/{service}/... (src/gateway/) */
  sourceUrl?: string
}
export interface PackageDecl {
  id: string
  version: string
  provider: { id: string; org: string }
  includedServices: ServiceDecl[]
}
export interface SubscriptionDecl { id: string; tenant: string; package: string }
export interface ClientDecl {
  client_id: string
  client_secret: string | undefined
  tenant: string
  redirect_uris: string[]
  scopes: string[]
  grant_types: string[]
  cors_origins: string[]
}
export interface UserDecl {
  id: string
  username: string
  password: string
  email: string
  tenants: Record<string, string[]>
}

export interface Bootstrap {
  tenants: TenantDecl[]
  packages: PackageDecl[]
  subscriptions: SubscriptionDecl[]
  clients: ClientDecl[]
  roles: Record<string, string[]>
  users: UserDecl[]
  metamodel: MetamodelDoc
  /** custom identity providers, each a JSON object checked by the admin API's rules (src/auth/federation/provider-fields.ts) */
  identityProviders: Record<string, unknown>[]
}

type Json = unknown

/** A service's source URL (the gateway's upstream): http or https, no query or fragment. */
export const SOURCE_URL = /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/

function fail(path: string, what: string): never {
  throw new ConfigError(`bootstrap file: ${path} ${what}`)
}
function obj(v: Json, path: string): Record<string, Json> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'must be an object')
  return v as Record<string, Json>
}
function str(v: Json, path: string): string {
  if (typeof v !== 'string' || v === '') fail(path, 'must be a non-empty string')
  return v
}
function optStr(v: Json, path: string): string | undefined {
  return v === undefined ? undefined : str(v, path)
}
/** A string that becomes a key of the auth store: bounded like the admin API's names. */
function key(v: Json, path: string): string {
  const s = str(v, path)
  if (s.length > MAX_NAME_CHARS) fail(path, `must be at most ${MAX_NAME_CHARS} characters`)
  return s
}
function arr<T>(v: Json, path: string, each: (x: Json, p: string) => T): T[] {
  if (v === undefined) return []
  if (!Array.isArray(v)) fail(path, 'must be an array')
  return v.map((x, i) => each(x, `${path}[${i}]`))
}
function bool(v: Json, path: string): boolean {
  if (v === undefined) return false
  if (typeof v !== 'boolean') fail(path, 'must be true or false')
  return v
}
function record<T>(v: Json, path: string, each: (x: Json, p: string, key: string) => T): Record<string, T> {
  if (v === undefined) return {}
  const o = obj(v, path)
  const out: Record<string, T> = {}
  for (const [k, x] of Object.entries(o)) out[k] = each(x, `${path}.${k}`, k)
  return out
}

function propertyDef(v: Json, path: string): PropertyDef {
  const o = obj(v, path)
  const type = str(o.type, `${path}.type`)
  if (!(PROPERTY_TYPES as readonly string[]).includes(type)) fail(`${path}.type`, `must be one of ${PROPERTY_TYPES.join(', ')}`)
  return { type: type as PropertyType, searchable: bool(o.searchable, `${path}.searchable`) }
}

function typeDef(v: Json, path: string, key: string, segments: number): TypeDef {
  if (key.split('/').length !== segments || key.split('/').some((s) => s === '')) {
    fail(path, `must be named with ${segments} non-empty segments separated by "/"`)
  }
  const o = obj(v, path)
  const owner = o.owner ?? 'customer'
  if (owner !== 'customer' && owner !== 'tenant') fail(`${path}.owner`, 'must be "customer" or "tenant"')
  return { owner, open: bool(o.open, `${path}.open`), properties: record(o.properties, `${path}.properties`, propertyDef) }
}

function tenantMetamodel(v: Json, path: string): TenantMetamodel {
  const o = obj(v, path)
  return {
    nodes: record(o.nodes, `${path}.nodes`, (x, p, k) => typeDef(x, p, k, 2)),
    relations: record(o.relations, `${path}.relations`, (x, p, k) => typeDef(x, p, k, 6)),
  }
}

export function parseBootstrap(doc: Json): Bootstrap {
  const o = obj(doc, '(top)')
  return {
    tenants: arr(o.tenants, 'tenants', (x, p) => {
      const t = obj(x, p)
      return { id: key(t.id, `${p}.id`), org: str(t.org, `${p}.org`) }
    }),
    packages: arr(o.packages, 'packages', (x, p) => {
      const k = obj(x, p)
      const provider = obj(k.provider, `${p}.provider`)
      return {
        id: key(k.id, `${p}.id`),
        version: str(k.version, `${p}.version`),
        provider: { id: str(provider.id, `${p}.provider.id`), org: str(provider.org, `${p}.provider.org`) },
        includedServices: arr(k.includedServices, `${p}.includedServices`, (s, sp) => {
          const so = obj(s, sp)
          const service: ServiceDecl = { id: str(so.id, `${sp}.id`), name: str(so.name, `${sp}.name`), scopes: arr(so.scopes, `${sp}.scopes`, str) }
          const sourceUrl = optStr(so.sourceUrl, `${sp}.sourceUrl`)
          if (sourceUrl !== undefined && !SOURCE_URL.test(sourceUrl)) fail(`${sp}.sourceUrl`, 'must be an http or https URL without query or fragment')
          if (sourceUrl !== undefined) service.sourceUrl = sourceUrl.replace(/\/+$/, '')
          return service
        }),
      }
    }),
    subscriptions: arr(o.subscriptions, 'subscriptions', (x, p) => {
      const s = obj(x, p)
      return { id: key(s.id, `${p}.id`), tenant: str(s.tenant, `${p}.tenant`), package: str(s.package, `${p}.package`) }
    }),
    clients: arr(o.clients, 'clients', (x, p) => {
      const c = obj(x, p)
      return {
        client_id: key(c.client_id, `${p}.client_id`),
        client_secret: optStr(c.client_secret, `${p}.client_secret`),
        tenant: str(c.tenant, `${p}.tenant`),
        redirect_uris: arr(c.redirect_uris, `${p}.redirect_uris`, str),
        scopes: arr(c.scopes, `${p}.scopes`, str),
        grant_types: arr(c.grant_types, `${p}.grant_types`, str),
        cors_origins: arr(c.cors_origins, `${p}.cors_origins`, str),
      }
    }),
    roles: record(o.roles, 'roles', (x, p, name) => {
      if (name.length > MAX_NAME_CHARS) fail('roles', `has a name longer than ${MAX_NAME_CHARS} characters`)
      return arr(x, p, str)
    }),
    users: arr(o.users, 'users', (x, p) => {
      const u = obj(x, p)
      const username = key(u.username, `${p}.username`)
      return {
        id: u.id === undefined ? username : key(u.id, `${p}.id`),
        username,
        password: str(u.password, `${p}.password`),
        email: str(u.email, `${p}.email`),
        tenants: record(u.tenants, `${p}.tenants`, (r, rp) => arr(r, rp, str)),
      }
    }),
    metamodel: record(o.metamodel, 'metamodel', tenantMetamodel),
    identityProviders: arr(o.identityProviders, 'identityProviders', obj),
  }
}

export const EMPTY_BOOTSTRAP: Bootstrap = parseBootstrap({})

export function readBootstrapFile(path: string | undefined): Bootstrap {
  if (path === undefined) return EMPTY_BOOTSTRAP
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new ConfigError(`cannot read bootstrap file ${path}: ${(err as Error).message}`)
  }
  let doc: Json
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw new ConfigError(`bootstrap file ${path} is not valid JSON: ${(err as Error).message}`)
  }
  return parseBootstrap(doc)
}
