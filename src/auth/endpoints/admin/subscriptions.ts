// /oauth2/v1/admin/subscriptions[/{id}]: a tenant's subscription to a
// package. Creating and cancelling (DELETE) call the subscription-events
// seam, whose publisher appends the spec's section 6 events
// (src/events/subscription-events.ts).
import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { now } from '../../../core/clock'
import type { SubscriptionRecord } from '../../models/auth-store'
import type { AuthServices } from '../../services'
import { SubscriptionBody } from './bodies'
import { admin, deleteOne, getOne, iso, reply, settle } from './common'
import { bodyReader, violation } from '../../helpers/json-body'
import { ADMIN } from '../answers'

const readSubscription = bodyReader(SubscriptionBody)

export const listSubscriptions = admin({
  body: 'none',
  answers: { 200: ADMIN.subscriptions },
  query: Type.Object({ tenant: Type.Optional(Type.String({ description: 'only those of this tenant' })) }),
  handle(s, ex, { query: { tenant } }) {
    reply(ex, 200, s.oauth.subscriptions.all().filter((v) => tenant === undefined || v.tenant === tenant))
  },
})

export const getSubscription = getOne('subscription', (s: AuthServices) => s.oauth.subscriptions, ADMIN.subscription)

export const createSubscription = admin({
  body: 'json',
  documented: SubscriptionBody,
  answers: { 201: ADMIN.subscription },
  errors: ['validation_violation'],
  handle(s, ex, { body }) {
    const given = readSubscription(body)
    const sub: SubscriptionRecord = { id: given.id ?? randomUUID(), tenant: given.tenant, package: given.package, validFrom: iso(now()) }
    const tenant = s.oauth.tenants.find(sub.tenant)
    const pkg = s.oauth.packages.find(sub.package)
    if (tenant === undefined) throw violation(`tenant "${sub.tenant}" does not exist`)
    if (pkg === undefined) throw violation(`package "${sub.package}" does not exist`)
    if (s.oauth.subscriptions.exists(sub.id)) throw violation(`subscription "${sub.id}" exists`)
    for (const value of s.oauth.subscriptions.all()) {
      if (value.tenant === sub.tenant && value.package === sub.package) throw violation(`tenant "${sub.tenant}" already subscribes to "${sub.package}" (subscription "${value.id}")`)
    }
    settle(ex, async () => {
      await s.oauth.subscriptions.save(sub.id, sub)
      s.oauth.subscriptionEvents.created(sub, tenant, pkg)
      reply(ex, 201, sub)
    })
  },
})

/** DELETE cancels: the subscription goes, and the seam hears of it. */
export const cancelSubscription = deleteOne('subscription', (s: AuthServices) => s.oauth.subscriptions, {
  async cascade(s, sub) {
    const tenant = s.oauth.tenants.find(sub.tenant)
    const pkg = s.oauth.packages.find(sub.package)
    if (tenant !== undefined && pkg !== undefined) s.oauth.subscriptionEvents.cancelled(sub, tenant, pkg, iso(now()))
  },
})
