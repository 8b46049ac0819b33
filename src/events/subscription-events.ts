// Subscription events of the authorization service (its spec, section 6),
// on the same event machinery as the graph's events: they are appended to
// the log named AUTH_EVENT_LOG in a shard actor and read at
// GET /oauth2/v1/events. Stored as subscriptionCreated_v3 /
// subscriptionCancelled_v1 with `metadata.schema` in the payload; a consumer
// that asks for the deprecated subscriptionCreated_v2 or _v1 gets those
// shapes, derived from v3 at read time.
import type { SubscriptionChange, SubscriptionEvents } from '../auth/helpers/subscription-events'
import type { ActorPool } from '../shard/actor-pool'

/** The log of the topic owned by platform.authorization; "@" keeps it apart from every tenant's log. */
export const AUTH_EVENT_LOG = '@platform.authorization'
export const CREATED_SCHEMAS = ['subscriptionCreated_v3', 'subscriptionCreated_v2', 'subscriptionCreated_v1'] as const
export type CreatedSchema = (typeof CREATED_SCHEMAS)[number]

function v3(change: SubscriptionChange): Record<string, unknown> {
  const pkg = change.package
  return {
    id: change.subscription.id,
    subscriber: { id: change.subscriber.id, org: change.subscriber.org },
    package: {
      id: pkg.id, version: pkg.version,
      provider: { id: pkg.provider.id, org: pkg.provider.org },
      includedServices: pkg.includedServices.map((s) => ({ id: s.id, name: s.name })),
    },
    validFrom: change.validFrom,
  }
}

function event(change: SubscriptionChange): { operation: string; schema: string; payload: Record<string, unknown> } {
  if (change.type === 'subscriptionCreated') {
    return { operation: 'subscriptionCreated', schema: 'subscriptionCreated_v3', payload: { metadata: { schema: 'subscriptionCreated_v3' }, ...v3(change) } }
  }
  return {
    operation: 'subscriptionCancelled', schema: 'subscriptionCancelled_v1',
    payload: { metadata: { schema: 'subscriptionCancelled_v1' }, ...v3(change), validUntil: change.validUntil },
  }
}

/** The deprecated shapes of a v3 payload. */
export function downgrade(payload: Record<string, unknown>, schema: CreatedSchema): Record<string, unknown> {
  if (schema === 'subscriptionCreated_v3') return payload
  const subscriber = payload.subscriber as { id: string; org: string }
  const pkg = payload.package as { provider: unknown; includedServices: unknown }
  if (schema === 'subscriptionCreated_v2') return { ...payload, metadata: { schema }, subscriber: subscriber.id }
  return { metadata: { schema }, id: payload.id, subscriber: { id: subscriber.id }, package: { provider: pkg.provider, includedServices: pkg.includedServices } }
}

/** A page body with subscriptionCreated payloads in the asked schema. */
export function rewritePage(body: string, schema: CreatedSchema): string {
  if (schema === 'subscriptionCreated_v3') return body
  const page = JSON.parse(body) as { events: { operation: string; schema: string; payload: Record<string, unknown> }[]; next: number }
  for (const e of page.events) {
    if (e.operation !== 'subscriptionCreated') continue
    e.schema = schema
    e.payload = downgrade(e.payload, schema)
  }
  return JSON.stringify(page)
}

/** Appends every subscription change to the log; durable before the actor acknowledges. */
export function publishSubscriptionEvents(events: SubscriptionEvents, pool: ActorPool): void {
  events.subscribe((change) => {
    pool.call(AUTH_EVENT_LOG, { op: 'appendEvents', tenant: AUTH_EVENT_LOG, events: [event(change)] }, (reply) => {
      if (reply.kind === 'error') console.error(`subscription event not recorded: ${reply.message}`)
    })
  })
}
