// /oauth2/v1/admin/roles[/{name}]: roles and the scopes each gives a user in
// the tenants where the user holds it.
import type { AuthServices } from '../../services'
import { RoleBody } from './bodies'
import { admin, IdParams, deleteOne, findOr404, reply, settle } from './common'
import { bodyReader } from '../../helpers/json-body'
import { ADMIN } from '../answers'

const readRole = bodyReader(RoleBody)

export const listRoles = admin({
  body: 'none',
  answers: { 200: ADMIN.roles },
  handle(s, ex) {
    // fromEntries: a role named "__proto__" is listed like any other (an assignment would set the prototype)
    reply(ex, 200, Object.fromEntries(s.oauth.roles.entries()))
  },
})

export const getRole = admin({
  body: 'none',
  answers: { 200: ADMIN.role },
  errors: ['element_not_found'],
  params: IdParams,
  handle(s, ex, { params: { id: name } }) {
    reply(ex, 200, { name, scopes: findOr404(s.oauth.roles, 'role', name) })
  },
})

export const replaceRole = admin({
  body: 'json',
  documented: RoleBody,
  answers: { 200: ADMIN.role, 201: ADMIN.role },
  errors: ['validation_violation'],
  params: IdParams,
  handle(s, ex, { params: { id: name }, body }) {
    const scopes = readRole(body).scopes ?? []
    const existed = s.oauth.roles.exists(name)
    settle(ex, async () => {
      await s.oauth.roles.save(name, scopes)
      reply(ex, existed ? 200 : 201, { name, scopes })
    })
  },
})

export const deleteRole = deleteOne('role', (s: AuthServices) => s.oauth.roles)
