// One reading of an identity provider's fields for both the admin API
// (PUT /admin/identity-providers/{id}) and the bootstrap file
// (`identityProviders`), with the same rules and messages.
import { JsonFields, URI, violation } from '../helpers/json-body'
import type { AuthModels } from '../models/index'
import type { IdentityProviderRecord, Provisioning } from '../models/identity-providers'

export const DEFAULT_SCOPES = ['openid', 'email', 'profile']
export const DEFAULT_CLAIMS = { username: 'preferred_username', email: 'email' }

export interface ProviderFields {
  record: Omit<IdentityProviderRecord, 'sealedSecret'>
  /** undefined: not given (an update keeps the stored one); null: a public client */
  clientSecret: string | null | undefined
}

function provisioningOf(f: JsonFields): Provisioning {
  const byEmail = f.boolean('link_by_verified_email')
  if (byEmail && f.has('provisioning')) throw violation('give either provisioning or link_by_verified_email, not both')
  if (byEmail) return { link_by_verified_email: true }
  if (!f.has('provisioning')) throw violation('provisioning ({"tenants": {tenant: [role]}}) or link_by_verified_email: true is required')
  return { tenants: f.object('provisioning').nameLists('tenants') }
}

function clientSecretOf(f: JsonFields): string | null | undefined {
  if (!f.has('client_secret')) return undefined
  return f.isNull('client_secret') ? null : f.string('client_secret', URI)
}

export function readProviderFields(f: JsonFields, id: string): ProviderFields {
  if (id === 'idp_default' || id === 'idp_legacy') throw violation(`"${id}" is the name of a built-in identity provider`)
  const issuer = f.string('issuer', URI)
  if (!/^https?:\/\/[^/?#]+/.test(issuer) || /[?#]/.test(issuer)) throw violation(`issuer "${issuer}" must be an http or https URL without query or fragment`)
  const claims = f.has('claims') ? f.object('claims') : undefined
  return {
    record: {
      id,
      issuer,
      client_id: f.string('client_id', URI),
      scopes: f.has('scopes') ? f.strings('scopes') : DEFAULT_SCOPES,
      claims: {
        username: claims?.optionalString('username') ?? DEFAULT_CLAIMS.username,
        email: claims?.optionalString('email') ?? DEFAULT_CLAIMS.email,
      },
      provisioning: provisioningOf(f),
    },
    clientSecret: clientSecretOf(f),
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
