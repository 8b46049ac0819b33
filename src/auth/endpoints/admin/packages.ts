// /oauth2/v1/admin/packages[/{id}]: packages, their provider tenant and the
// services they include with the scopes each defines.
import type { PackageDecl, ServiceDecl } from '../../../bootstrap/bootstrap-file'
import type { Static } from '@sinclair/typebox'
import { proxyUrlOf } from '../../../contract/urls'
import type { AuthServices } from '../../services'
import { PackageBody } from './bodies'
import { admin, IdParams, deleteOne, getOne, listOf, reply, settle } from './common'
import { bodyReader, violation } from '../../helpers/json-body'
import { ADMIN } from '../answers'

const readPackage = bodyReader(PackageBody)

const packages = (s: AuthServices): AuthServices['oauth']['packages'] => s.oauth.packages

function subscribed(s: AuthServices, id: string): string | undefined {
  const subs = s.oauth.subscriptions.ofPackage(id).map((sub) => `"${sub.id}"`)
  return subs.length === 0 ? undefined : `package "${id}" has subscriptions ${subs.join(', ')}: cancel them first`
}

/** A service of the body; `sourceUrl` makes the gateway serve it (src/gateway/). */
function serviceOf(svc: NonNullable<Static<typeof PackageBody>['includedServices']>[number]): ServiceDecl {
  const service: ServiceDecl = { id: svc.id, name: svc.name, scopes: svc.scopes ?? [] }
  if (svc.sourceUrl !== undefined) service.sourceUrl = svc.sourceUrl.replace(/\/+$/, '')
  return service
}

/** The package with each gateway-served service's public `proxyUrl`. */
const withProxyUrls = (s: AuthServices) => (pkg: PackageDecl): PackageDecl => ({
  ...pkg,
  includedServices: pkg.includedServices.map((svc) => (svc.sourceUrl === undefined ? svc : { ...svc, proxyUrl: proxyUrlOf(s.publicUrl, pkg.id, svc.id) })),
})

export const listPackages = admin({ body: 'none', answers: { 200: ADMIN.packages }, handle: (s, ex, input) => listOf(packages, ADMIN.packages, withProxyUrls(s)).handle(s, ex, input) })
export const getPackage = admin({ body: 'none', params: IdParams, answers: { 200: ADMIN.package }, errors: ['element_not_found'], handle: (s, ex, input) => getOne('package', packages, ADMIN.package, withProxyUrls(s)).handle(s, ex, input) })
export const deletePackage = deleteOne('package', packages, { refuse: subscribed })

export const replacePackage = admin({
  body: 'json',
  documented: PackageBody,
  answers: { 200: ADMIN.package, 201: ADMIN.package },
  errors: ['validation_violation'],
  params: IdParams,
  handle(s, ex, { params: { id }, body }) {
    const given = readPackage(body)
    const pkg: PackageDecl = {
      id: id,
      version: given.version,
      provider: { id: given.provider.id, org: given.provider.org },
      includedServices: (given.includedServices ?? []).map(serviceOf),
    }
    const tenant = s.oauth.tenants.find(pkg.provider.id)
    if (tenant === undefined) throw violation(`provider.id: tenant "${pkg.provider.id}" does not exist`)
    if (tenant.org !== pkg.provider.org) throw violation(`provider.org: tenant "${tenant.id}" belongs to organization "${tenant.org}"`)
    const existed = s.oauth.packages.exists(id)
    settle(ex, async () => {
      await s.oauth.packages.save(pkg.id, pkg)
      reply(ex, existed ? 200 : 201, withProxyUrls(s)(pkg))
    })
  },
})
