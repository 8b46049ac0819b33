// /oauth2/v1/admin/identity-providers[/{id}]: custom identity providers
// (OpenID Connect federation). PUT creates or replaces one; the client
// secret is sealed at rest and never shown again (an update without
// client_secret keeps the stored one; null makes the client public).
// Deleting a provider ends its links to local users.
import type { AuthServices } from '../../services'
import { callbackUrl } from '../../federation/federation'
import { ProviderBody, providerProblem, readProviderFields, refuseBuiltIn } from '../../federation/provider-fields'
import type { IdentityProviderRecord } from '../../models/identity-providers'
import { bodyReader, violation } from '../../helpers/json-body'
import { ADMIN } from '../answers'
import { admin, IdParams, deleteOne, getOne, listOf, reply, settle } from './common'

const readProvider = bodyReader(ProviderBody)
const providers = (s: AuthServices): AuthServices['oauth']['federation']['providers'] => s.oauth.federation.providers

/** The stored record without its sealed secret, with the redirect URI to register upstream. */
function view(s: AuthServices): (p: IdentityProviderRecord) => Record<string, unknown> {
  return (p) => {
    const { sealedSecret, ...rest } = p
    return { ...rest, client_secret_set: sealedSecret !== undefined, redirect_uri: callbackUrl(s.oauth.issuer, p.id) }
  }
}

export const listIdentityProviders = admin({ body: 'none', answers: { 200: ADMIN.identityProviders }, handle: (s, ex, input) => listOf(providers, ADMIN.identityProviders, view(s)).handle(s, ex, input) })
export const getIdentityProvider = admin({ body: 'none', params: IdParams, answers: { 200: ADMIN.identityProvider }, errors: ['element_not_found'], handle: (s, ex, input) => getOne('identity provider', providers, ADMIN.identityProvider, view(s)).handle(s, ex, input) })

export const deleteIdentityProvider = deleteOne('identity provider', providers, {
  async cascade(s, p) {
    s.oauth.federation.discovery.forget(p.issuer)
    await s.oauth.federation.links.removeProvider(p.id)
  },
})

export const replaceIdentityProvider = admin({
  body: 'json',
  documented: ProviderBody,
  answers: { 200: ADMIN.identityProvider, 201: ADMIN.identityProvider },
  errors: ['validation_violation'],
  params: IdParams,
  handle(s, ex, { params: { id }, body }) {
    const fed = s.oauth.federation
    refuseBuiltIn(id)
    const { record, clientSecret } = readProviderFields(readProvider(body), id)
    const problem = providerProblem(s.oauth, record)
    if (problem !== undefined) throw violation(problem)
    const existing = fed.providers.find(id)
    const sealedSecret = clientSecret === undefined ? existing?.sealedSecret : fed.seal(id, clientSecret ?? undefined)
    const stored: IdentityProviderRecord = { ...record, sealedSecret }
    settle(ex, async () => {
      await fed.providers.save(id, stored)
      if (existing !== undefined) fed.discovery.forget(existing.issuer)
      reply(ex, existing === undefined ? 201 : 200, view(s)(stored))
    })
  },
})
