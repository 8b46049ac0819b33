// Reads and validates the bootstrap file of docs/design/contracts.md against its
// schema (TypeBox, checked by the one schema compiler, src/schema). Every key
// is optional; a malformed file stops the start with a message naming the
// bad path.
import { readFileSync } from 'node:fs'
import { MAX_NAME_CHARS } from '../model/name-limit'
import { ConfigError } from '../config/load-config'
import { Type, type Static, type TRecord, type TSchema, type TString } from '@sinclair/typebox'
import { MetamodelDoc, PROPERTY_TYPES, PropertyDef, PropertyType, TypeDef } from '../model/metamodel'
import { RULE, SCHEMAS } from '../schema/compiler'
import { fieldName, type FieldError } from '../schema/field-error'

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
  email_verified: boolean
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

// The file as a schema, its fields in the order they were always read: a
// message names the first bad value a reader meets. x-rule gives the words
// of a value that breaks its rule (or of a bad key of a record).
const str = Type.String({ minLength: 1 })
/** A string that becomes a key of the auth store: bounded like the admin API's names. */
const key = Type.String({ minLength: 1, maxLength: MAX_NAME_CHARS })
const strs = Type.Optional(Type.Array(str))
const flag = Type.Optional(Type.Boolean())
const keyed = <T extends TSchema>(value: T, names: Readonly<Record<string, unknown>>): TRecord<TString, T> => Type.Record(Type.String(), value, { propertyNames: names })

const PropertySchema = Type.Object({
  type: Type.Unsafe<PropertyType>({ type: 'string', minLength: 1, enum: PROPERTY_TYPES, [RULE]: `must be one of ${PROPERTY_TYPES.join(', ')}` }),
  searchable: flag,
})
const TypeSchema = Type.Object({
  owner: Type.Optional(Type.Unsafe<TypeDef['owner'] | null>({ enum: ['customer', 'tenant', null], [RULE]: 'must be "customer" or "tenant"' })),
  open: flag,
  properties: Type.Optional(Type.Record(Type.String(), PropertySchema)),
})
const typesNamed = (segments: number): TRecord<TString, typeof TypeSchema> => keyed(TypeSchema, { type: 'string', pattern: `^[^/]+(/[^/]+){${segments - 1}}$`, [RULE]: `must be named with ${segments} non-empty segments separated by "/"` })
const NodeTypes = typesNamed(2)
const TenantMetamodelSchema = Type.Object({ nodes: Type.Optional(NodeTypes), relations: Type.Optional(typesNamed(6)) })

const ServiceSchema = Type.Object({
  id: str, name: str, scopes: strs,
  sourceUrl: Type.Optional(Type.String({ minLength: 1, pattern: SOURCE_URL.source, [RULE]: 'must be an http or https URL without query or fragment' })),
})

const BootstrapSchema = Type.Object({
  tenants: Type.Optional(Type.Array(Type.Object({ id: key, org: str }))),
  packages: Type.Optional(Type.Array(Type.Object({
    id: key,
    version: str,
    provider: Type.Object({ id: str, org: str }),
    includedServices: Type.Optional(Type.Array(ServiceSchema)),
  }))),
  subscriptions: Type.Optional(Type.Array(Type.Object({ id: key, tenant: str, package: str }))),
  clients: Type.Optional(Type.Array(Type.Object({
    client_id: key, client_secret: Type.Optional(str), tenant: str, redirect_uris: strs, scopes: strs, grant_types: strs, cors_origins: strs,
  }))),
  roles: Type.Optional(keyed(Type.Array(str), { type: 'string', maxLength: MAX_NAME_CHARS, [RULE]: `has a name longer than ${MAX_NAME_CHARS} characters` })),
  users: Type.Optional(Type.Array(Type.Object({ username: key, id: Type.Optional(key), password: str, email: str, email_verified: flag, tenants: Type.Optional(Type.Record(Type.String(), Type.Array(str))) }))),
  metamodel: Type.Optional(Type.Record(Type.String(), TenantMetamodelSchema)),
  identityProviders: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
})

const SHAPE_WORDS: Readonly<Record<string, string>> = { object: 'must be an object', array: 'must be an array', boolean: 'must be true or false', string: 'must be a non-empty string' }

/** The words of the file's first bad value; a key's rule that starts with "has" is said of its record. */
function problem(e: FieldError): string {
  const rule = String(e.schema[RULE] ?? '')
  if (e.kind === 'key') {
    const said = String((e.schema.propertyNames as Record<string, unknown>)[RULE])
    return `${fieldName('', said.startsWith('has ') ? e.path.slice(0, -1) : e.path, '(top)')} ${said}`
  }
  const type = Array.isArray(e.schema.type) ? e.schema.type[0] : e.schema.type
  const words = e.kind === 'shape' ? SHAPE_WORDS[String(type)] ?? rule
    : e.keyword === 'minLength' ? SHAPE_WORDS.string : e.keyword === 'maxLength' ? `must be at most ${String(e.schema.maxLength)} characters` : rule
  return `${fieldName('', e.path, '(top)')} ${words}`
}

const checkFile = SCHEMAS.fields(BootstrapSchema)

type TypesDoc = Static<typeof NodeTypes>

// Built with Object.fromEntries: an assignment to a "__proto__" key would set the prototype instead of a field.
function typeDefs(types: TypesDoc | undefined): Record<string, TypeDef> {
  return Object.fromEntries(Object.entries(types ?? {}).map(([name, t]) => {
    const properties = Object.fromEntries(Object.entries(t.properties ?? {}).map(([p, def]): [string, PropertyDef] => [p, { type: def.type, searchable: def.searchable ?? false }]))
    return [name, { owner: t.owner ?? 'customer', open: t.open ?? false, properties }]
  }))
}

function serviceOf(s: Static<typeof ServiceSchema>): ServiceDecl {
  const service: ServiceDecl = { id: s.id, name: s.name, scopes: s.scopes ?? [] }
  if (s.sourceUrl !== undefined) service.sourceUrl = s.sourceUrl.replace(/\/+$/, '')
  return service
}

export function parseBootstrap(doc: Json): Bootstrap {
  const bad = checkFile(doc)
  if (bad !== undefined) throw new ConfigError(`bootstrap file: ${problem(bad)}`)
  const o = doc as Static<typeof BootstrapSchema>
  const metamodel: MetamodelDoc = Object.fromEntries(Object.entries(o.metamodel ?? {}).map(([tenant, m]) => [tenant, { nodes: typeDefs(m.nodes), relations: typeDefs(m.relations) }]))
  const roles: Record<string, string[]> = Object.fromEntries(Object.entries(o.roles ?? {}))
  return {
    tenants: (o.tenants ?? []).map((t) => ({ id: t.id, org: t.org })),
    packages: (o.packages ?? []).map((p) => ({
      id: p.id, version: p.version, provider: { id: p.provider.id, org: p.provider.org }, includedServices: (p.includedServices ?? []).map(serviceOf),
    })),
    subscriptions: (o.subscriptions ?? []).map((s) => ({ id: s.id, tenant: s.tenant, package: s.package })),
    clients: (o.clients ?? []).map((c) => ({
      client_id: c.client_id, client_secret: c.client_secret, tenant: c.tenant,
      redirect_uris: c.redirect_uris ?? [], scopes: c.scopes ?? [], grant_types: c.grant_types ?? [], cors_origins: c.cors_origins ?? [],
    })),
    roles,
    users: (o.users ?? []).map((u) => ({
      id: u.id ?? u.username, username: u.username, password: u.password, email: u.email, email_verified: u.email_verified === true, tenants: { ...u.tenants },
    })),
    metamodel,
    identityProviders: o.identityProviders ?? [],
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
