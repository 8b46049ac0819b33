// /oauth2/v1/admin/clients[/{id}[/secret]]: OAuth clients. The server makes
// every secret it hands out (256 random bits, shown once, stored as
// SHA-256); a public client (`"public": true`) has none and must use PKCE.
// Deleting a client ends its tokens and codes.
import type { Static } from '@sinclair/typebox'
import { randomBytes } from 'node:crypto'
import type { AuthServices } from '../../services'
import type { ClientRecord } from '../../models/auth-store'
import { clientProblem } from '../../helpers/client-rules'
import { randomToken, sha256 } from '../../helpers/secrets'
import { ClientBody, ClientUpdateBody } from './bodies'
import { endTokensOfClientTenant } from '../../helpers/tenant-change'
import { admin, IdParams, deleteOne, findOr404, getOne, listOf, reply, settle } from './common'
import { bodyReader, violation } from '../../helpers/json-body'
import { ADMIN } from '../answers'
import { builtInClientRefusal } from '../../models/account-client'

const readClient = bodyReader(ClientBody)
const readUpdate = bodyReader(ClientUpdateBody)

export function clientView(c: ClientRecord): Record<string, unknown> {
  return {
    client_id: c.client_id,
    tenant: c.tenant,
    public: c.secret === undefined,
    secret_hash: c.secret === undefined ? null : c.secret.alg,
    redirect_uris: c.redirect_uris,
    scopes: c.scopes,
    grant_types: c.grant_types,
    cors_origins: c.cors_origins ?? [],
  }
}

function checked(s: AuthServices, c: ClientRecord): ClientRecord {
  if (!s.oauth.tenants.exists(c.tenant)) throw violation(`tenant "${c.tenant}" does not exist`)
  const problem = clientProblem({ ...c, public: c.secret === undefined })
  if (problem !== undefined) throw violation(problem)
  return c
}

type Settings = Pick<ClientRecord, 'tenant' | 'redirect_uris' | 'scopes' | 'grant_types' | 'cors_origins'>

/** The given settings over `base` (a list given as null is empty). */
function settings(given: Partial<Static<typeof ClientUpdateBody>>, base: Settings): Settings {
  const listOr = (v: string[] | null | undefined, kept: string[]): string[] => (v === undefined ? kept : v ?? [])
  return {
    tenant: given.tenant ?? base.tenant,
    redirect_uris: listOr(given.redirect_uris, base.redirect_uris),
    scopes: listOr(given.scopes, base.scopes),
    grant_types: listOr(given.grant_types, base.grant_types),
    cors_origins: listOr(given.cors_origins, base.cors_origins ?? []),
  }
}
const NEW: Omit<Settings, 'tenant'> = { redirect_uris: [], scopes: [], grant_types: [], cors_origins: [] }

function refuseBuiltIn(id: string): void {
  const refusal = builtInClientRefusal(id)
  if (refusal !== undefined) throw violation(refusal)
}

const clients = (s: AuthServices): AuthServices['oauth']['clients'] => s.oauth.clients
const save = (s: AuthServices, c: ClientRecord): Promise<void> => s.oauth.clients.save(c.client_id, c)

export const listClients = listOf(clients, ADMIN.clients, clientView)
export const getClient = getOne('client', clients, ADMIN.client, clientView)

export const createClient = admin({
  body: 'json',
  documented: ClientBody,
  answers: { 201: ADMIN.clientWithSecret },
  errors: ['validation_violation'],
  handle(s, ex, { body }) {
    const given = readClient(body)
    const clientId = given.client_id ?? randomBytes(16).toString('base64url')
    refuseBuiltIn(clientId)
    if (s.oauth.clients.exists(clientId)) throw violation(`client "${clientId}" exists: PUT /admin/clients/${clientId} changes it`)
    const secret = given.public === true ? undefined : randomToken()
    const client = checked(s, {
      client_id: clientId, ...settings(given, { tenant: given.tenant, ...NEW }), secret: secret === undefined ? undefined : { alg: 'sha256', hash: sha256(secret) },
    })
    settle(ex, async () => {
      await save(s, client)
      reply(ex, 201, secret === undefined ? clientView(client) : { ...clientView(client), client_secret: secret })
    })
  },
})

export const updateClient = admin({
  body: 'json',
  documented: ClientUpdateBody,
  answers: { 200: ADMIN.client },
  errors: ['validation_violation', 'element_not_found'],
  params: IdParams,
  handle(s, ex, { params: { id }, body }) {
    refuseBuiltIn(id)
    const existing = findOr404(s.oauth.clients, 'client', id)
    const client = checked(s, { ...existing, ...settings(readUpdate(body), existing) })
    settle(ex, async () => {
      await save(s, client)
      await endTokensOfClientTenant(s, client.client_id, existing.tenant, client.tenant)
      reply(ex, 200, clientView(client))
    })
  },
})

/** A new generated secret; the old one stops working at once. */
export const rotateClientSecret = admin({
  body: 'none',
  answers: { 200: ADMIN.clientWithSecret },
  errors: ['validation_violation', 'element_not_found'],
  params: IdParams,
  handle(s, ex, { params: { id } }) {
    const existing = findOr404(s.oauth.clients, 'client', id)
    if (existing.secret === undefined) throw violation(`client "${id}" is public: it has no secret`)
    const secret = randomToken()
    const client: ClientRecord = { ...existing, secret: { alg: 'sha256', hash: sha256(secret) } }
    settle(ex, async () => {
      await save(s, client)
      reply(ex, 200, { ...clientView(client), client_secret: secret })
    })
  },
})

/** DELETE also ends the client's tokens and codes. */
export const deleteClient = deleteOne('client', clients, {
  refuse: (_s, id) => builtInClientRefusal(id),
  async cascade(s, client) {
    const id = client.client_id
    await s.oauth.refreshTokens.revokeWhere((r) => r.client === id)
    await s.tokens.revokeWhere((r) => r.client === id)
    s.oauth.codes.removeForClient(id)
  },
})
