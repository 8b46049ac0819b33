// Writes the authorization service's subscription changes (src/auth/subscription-events.ts)
// to its event log as subscriptionCreated_v3 / subscriptionCancelled_v1; the
// reader and the deprecated shapes are src/events/subscription-events.ts.
// Composition: it joins the auth service to the actors, so it sits at the root.
import type { SubscriptionChange, SubscriptionEvents } from '../auth/helpers/subscription-events'
import { AUTH_EVENT_LOG } from '../events/subscription-events'
import type { ActorPool } from '../shards/actor-pool'
import { log } from '../telemetry/log'

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

/** Appends every subscription change to the log; durable before the actor acknowledges. */
export function publishSubscriptionEvents(events: SubscriptionEvents, pool: ActorPool): void {
  events.subscribe((change) => {
    pool.call(AUTH_EVENT_LOG, { op: 'appendEvents', tenant: AUTH_EVENT_LOG, events: [event(change)] }, (reply) => {
      if (reply.kind === 'error') log.error(`subscription event not recorded: ${reply.message}`)
    })
  })
}
