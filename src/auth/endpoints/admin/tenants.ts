// /oauth2/v1/admin/tenants[/{id}]: tenants and their organization.
import type { AuthServices } from '../../services'
import { TenantBody, TenantParams, TenantReplaceBody } from './bodies'
import { admin, deleteOne, getOne, listOf, reply, settle } from './common'
import { bodyReader, violation } from '../../helpers/json-body'
import { ADMIN } from '../answers'

const readTenant = bodyReader(TenantBody)
const readReplacement = bodyReader(TenantReplaceBody)

const tenants = (s: AuthServices): AuthServices['oauth']['tenants'] => s.oauth.tenants

/** What still refers to a tenant (it cannot be deleted then). */
function references(s: AuthServices, id: string): string | undefined {
  const refs: string[] = []
  for (const c of s.oauth.clients.ofTenant(id)) refs.push(`client "${c.client_id}"`)
  for (const sub of s.oauth.subscriptions.ofTenant(id)) refs.push(`subscription "${sub.id}"`)
  for (const pkg of s.oauth.packages.providedBy(id)) refs.push(`package "${pkg.id}"`)
  for (const u of s.oauth.users.memberOf(id)) refs.push(`user "${u.id}"`)
  return refs.length === 0 ? undefined : `tenant "${id}" is still used by ${refs.join(', ')}`
}

export const listTenants = listOf(tenants, ADMIN.tenants)
export const getTenant = getOne('tenant', tenants, ADMIN.tenant)
export const deleteTenant = deleteOne('tenant', tenants, { refuse: references })

export const createTenant = admin({
  body: 'json',
  documented: TenantBody,
  answers: { 201: ADMIN.tenant },
  errors: ['validation_violation'],
  handle(s, ex, { body }) {
    const { id, org } = readTenant(body)
    const tenant = { id, org }
    if (s.oauth.tenants.exists(tenant.id)) throw violation(`tenant "${tenant.id}" exists: PUT /admin/tenants/${tenant.id} changes it`)
    settle(ex, async () => {
      await s.oauth.tenants.save(tenant.id, tenant)
      reply(ex, 201, tenant)
    })
  },
})

export const replaceTenant = admin({
  body: 'json',
  documented: TenantReplaceBody,
  answers: { 200: ADMIN.tenant, 201: ADMIN.tenant },
  errors: ['validation_violation'],
  params: TenantParams,
  handle(s, ex, { params: { id }, body }) {
    const tenant = { id: id, org: readReplacement(body).org }
    const existed = s.oauth.tenants.exists(id)
    settle(ex, async () => {
      await s.oauth.tenants.save(tenant.id, tenant)
      reply(ex, existed ? 200 : 201, tenant)
    })
  },
})
