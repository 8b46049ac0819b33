// /oauth2/v1/admin/tenants[/{id}]: tenants and their organization.
import type { Services } from '../../../front/services'
import { admin, deleteOne, getOne, listOf, putDurably, reply, settle } from './common'
import { JsonFields, violation } from './json-body'

const tenants = (s: Services): Services['authStore']['tenants'] => s.authStore.tenants

/** What still refers to a tenant (it cannot be deleted then). */
function references(s: Services, id: string): string | undefined {
  const refs: string[] = []
  for (const { value } of s.authStore.clients.getRange()) if (value.tenant === id) refs.push(`client "${value.client_id}"`)
  for (const { value } of s.authStore.subscriptions.getRange()) if (value.tenant === id) refs.push(`subscription "${value.id}"`)
  for (const { value } of s.authStore.packages.getRange()) if (value.provider.id === id) refs.push(`package "${value.id}"`)
  for (const { value } of s.authStore.users.getRange()) if (Object.prototype.hasOwnProperty.call(value.tenants, id)) refs.push(`user "${value.id}"`)
  return refs.length === 0 ? undefined : `tenant "${id}" is still used by ${refs.join(', ')}`
}

export const listTenants = listOf(tenants)
export const getTenant = getOne('tenant', tenants)
export const deleteTenant = deleteOne('tenant', tenants, { refuse: references })

export const createTenant = admin({
  body: 'json',
  handle(s, ex, _params, body) {
    const f = JsonFields.parse(body)
    const tenant = { id: f.string('id'), org: f.string('org') }
    if (s.authStore.tenants.get(tenant.id) !== undefined) throw violation(`tenant "${tenant.id}" exists: PUT /admin/tenants/${tenant.id} changes it`)
    settle(ex, async () => {
      await putDurably(s, s.authStore.tenants, tenant.id, tenant)
      reply(ex, 201, tenant)
    })
  },
})

export const replaceTenant = admin({
  body: 'json',
  handle(s, ex, [id], body) {
    const tenant = { id: id!, org: JsonFields.parse(body).string('org') }
    const existed = s.authStore.tenants.get(id!) !== undefined
    settle(ex, async () => {
      await putDurably(s, s.authStore.tenants, tenant.id, tenant)
      reply(ex, existed ? 200 : 201, tenant)
    })
  },
})
