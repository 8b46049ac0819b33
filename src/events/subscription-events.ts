// Subscription events of the authorization service (its spec, section 6),
// on the same event machinery as the graph's events: they are appended to
// the log named AUTH_EVENT_LOG in a shard actor and read at
// GET /oauth2/v1/events. Stored as subscriptionCreated_v3 /
// subscriptionCancelled_v1 with `metadata.schema` in the payload; a consumer
// that asks for the deprecated subscriptionCreated_v2 or _v1 gets those
// shapes, derived from v3 at read time. The writer is
// src/app/publish-subscription-events.ts (it knows the auth service's changes;
// this reader does not).

/** The log of the topic owned by platform.authorization; "@" keeps it apart from every tenant's log. */
export const AUTH_EVENT_LOG = '@platform.authorization'
export const CREATED_SCHEMAS = ['subscriptionCreated_v3', 'subscriptionCreated_v2', 'subscriptionCreated_v1'] as const
export type CreatedSchema = (typeof CREATED_SCHEMAS)[number]

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
