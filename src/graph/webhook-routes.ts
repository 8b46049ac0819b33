// /graph/v1/{tenant}/webhooks[/{id}] (docs/design/contracts.md, Events): register, list,
// show and delete a tenant's webhooks (scope platform.profile_graph_manage).
// The shard actor keeps them; delivery (src/events/webhook-delivery.ts) hears of every
// change from the actor. Also the plain-HTTP answer of the stream path.
// A URL whose host is a non-public address or a local/metadata name is
// refused at once (src/net/webhook-policy.ts); delivery checks the resolved address.
import { ApiError } from '../core/errors'
import { graphMethod } from './services'
import { answer } from '../http/answer'
import { WebhookBody, WebhookParams } from './params'
import { CreatedWebhook, NO_BODY, WebhookList, WebhookView } from './answers'
import type { WebhookPolicy } from '../net/webhook-policy'

export const MAX_URL_BYTES = 2048

/** The body's url, normalised (WHATWG URL), if the policy lets it be registered. */
export function webhookUrl(url: string, policy: WebhookPolicy): string {
  if (Buffer.byteLength(url) > MAX_URL_BYTES) throw new ApiError('bad_request', `url is longer than ${MAX_URL_BYTES} bytes`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ApiError('bad_request', `url "${url}" is not an absolute URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ApiError('bad_request', `url must be http or https, got "${parsed.protocol.slice(0, -1)}"`)
  }
  const refusal = policy.refusal(parsed)
  if (refusal !== undefined) throw new ApiError('bad_request', refusal)
  return parsed.href
}

export const createWebhook = graphMethod({
  body: 'json',
  json: WebhookBody,
  answers: { 201: CreatedWebhook },
  errors: ['insufficient_storage'],
  summary: 'Register a webhook',
  handle(s, ex, { tenant, body }) {
    s.pool.call(tenant, { op: 'createWebhook', tenant, url: webhookUrl(body.url, s.webhookPolicy) }, answer(ex))
  },
})

export const listWebhooks = graphMethod({
  body: 'none',
  answers: { 200: WebhookList },
  summary: "The tenant's webhooks",
  handle(s, ex, { tenant }) {
    s.pool.call(tenant, { op: 'listWebhooks', tenant, id: undefined }, answer(ex))
  },
})

export const getWebhook = graphMethod({
  body: 'none',
  params: WebhookParams,
  answers: { 200: WebhookView },
  errors: ['element_not_found'],
  summary: 'Read a webhook',
  handle(s, ex, { tenant, params: { id } }) {
    s.pool.call(tenant, { op: 'listWebhooks', tenant, id }, answer(ex))
  },
})

export const deleteWebhook = graphMethod({
  body: 'none',
  params: WebhookParams,
  answers: { 204: NO_BODY },
  errors: ['element_not_found', 'insufficient_storage'],
  summary: 'Delete a webhook',
  handle(s, ex, { tenant, params: { id } }) {
    s.pool.call(tenant, { op: 'deleteWebhook', tenant, id }, answer(ex))
  },
})

/** GET .../events/stream without `Upgrade: websocket` (upgrades never reach the HTTP routes). */
export const streamWithoutUpgrade = graphMethod({
  body: 'none',
  // Its success is the WebSocket upgrade (101), which never reaches the routes.
  answers: { 101: { description: 'Switching Protocols: the WebSocket event stream (docs/manual/events.md)' } },
  summary: 'The event stream: a WebSocket endpoint (Upgrade: websocket); a plain GET is a 400',
  handle() {
    throw new ApiError('bad_request', 'events/stream is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket); for plain HTTP use GET events?after=&wait=')
  },
})
