// One reading of an identity provider's fields for both the admin API
// (PUT /admin/identity-providers/{id}) and the bootstrap file
// (`identityProviders`), with the same rules and messages.
import { Type, type Static } from '@sinclair/typebox'
import { RULE } from '../../schema/compiler'
import { field, fieldsReader, flag, list, listsOf, NAME_RULE, nameLists, URI, violation } from '../helpers/json-body'
import type { AuthModels } from '../models/index'
import type { IdentityProviderRecord, Provisioning } from '../models/identity-providers'

export const DEFAULT_SCOPES = ['openid', 'email', 'profile']
export const DEFAULT_CLAIMS = { username: 'preferred_username', email: 'email' }

const ISSUER = '^https?://[^/?#]+[^?#]*$'
const Provisioning = Type.Object({ tenants: nameLists({ description: 'roles per tenant given to a user it provisions' }) })

/** The fields in the order they are read: a message names the first bad one. */
const providerFields = {
  issuer: Type.String({ allOf: [{ pattern: URI.source, [RULE]: NAME_RULE }, { pattern: ISSUER, [RULE]: 'must be an http or https URL without query or fragment' }] }),
  client_id: field({ description: 'the client id registered upstream' }, URI),
  scopes: Type.Optional(list({ description: `asked upstream (${DEFAULT_SCOPES.join(' ')} if absent)` })),
  claims: Type.Optional(Type.Object({ username: Type.Optional(field()), email: Type.Optional(field()) }, { description: 'the upstream claims that give the username and the email' })),
  link_by_verified_email: Type.Optional(flag({ description: 'link to the local user with the same verified email instead of provisioning' })),
  // null passes here so that "not both" is said first; given as null it must then be an object (readProvisioning)
  provisioning: Type.Optional(Type.Unsafe<Static<typeof Provisioning> | null>({ ...Provisioning, type: ['object', 'null'] })),
  client_secret: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], pattern: URI.source, [RULE]: NAME_RULE, description: 'sealed at rest; null: a public client' })),
}
export const ProviderBody = Type.Object(providerFields, {
  example: { issuer: 'https://login.example.com', client_id: 'platform', client_secret: 'upstream-secret', provisioning: { tenants: { acme: ['enricher'] } } },
})
/** A provider of the bootstrap file: the same fields and its id. */
export const ProviderEntry = Type.Object({ id: field(), ...providerFields })
const readProvisioning = fieldsReader(Type.Object({ provisioning: Provisioning }))

export interface ProviderFields {
  record: Omit<IdentityProviderRecord, 'sealedSecret'>
  /** undefined: not given (an update keeps the stored one); null: a public client */
  clientSecret: string | null | undefined
}

function provisioningOf(given: Static<typeof ProviderBody>, root: string): Provisioning {
  const byEmail = given.link_by_verified_email === true
  if (byEmail && given.provisioning !== undefined) throw violation('give either provisioning or link_by_verified_email, not both')
  if (byEmail) return { link_by_verified_email: true }
  if (given.provisioning === undefined) throw violation('provisioning ({"tenants": {tenant: [role]}}) or link_by_verified_email: true is required')
  return { tenants: listsOf(readProvisioning({ provisioning: given.provisioning }, root).provisioning.tenants) }
}

/** The record of fields that fit ProviderBody (checked by the caller, under `root`). */
/** The built-in providers' ids are not for custom ones. */
export function refuseBuiltIn(id: string): void {
  if (id === 'idp_default' || id === 'idp_legacy') throw violation(`"${id}" is the name of a built-in identity provider`)
}

export function readProviderFields(given: Static<typeof ProviderBody>, id: string, root = ''): ProviderFields {
  refuseBuiltIn(id)
  return {
    record: {
      id,
      issuer: given.issuer,
      client_id: given.client_id,
      scopes: given.scopes === undefined ? DEFAULT_SCOPES : given.scopes ?? [],
      claims: { username: given.claims?.username ?? DEFAULT_CLAIMS.username, email: given.claims?.email ?? DEFAULT_CLAIMS.email },
      provisioning: provisioningOf(given, root),
    },
    clientSecret: given.client_secret,
  }
}

/** What must exist for the provisioning rule: its tenants and roles. */
export function providerProblem(models: Pick<AuthModels, 'tenants' | 'roles'>, p: Omit<IdentityProviderRecord, 'sealedSecret'>): string | undefined {
  if (!('tenants' in p.provisioning)) return undefined
  for (const [tenant, roles] of Object.entries(p.provisioning.tenants)) {
    if (!models.tenants.exists(tenant)) return `provisioning.tenants: tenant "${tenant}" does not exist`
    for (const role of roles) if (!models.roles.exists(role)) return `provisioning.tenants.${tenant}: role "${role}" does not exist`
  }
  return undefined
}
