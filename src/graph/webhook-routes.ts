// /graph/v1/{tenant}/webhooks[/{id}] (docs/contracts.md, Events): register, list,
// show and delete a tenant's webhooks (scope platform.profile_graph_manage).
// The shard actor keeps them; delivery (src/events/webhook-delivery.ts) hears of every
// change from the actor. Also the plain-HTTP answer of the stream path.
// A URL whose host is a non-public address or a local/metadata name is
// refused at once (src/net/webhook-policy.ts); delivery checks the resolved address.
import { ApiError } from '../errors'
import type { GraphHandler } from './services'
import { answer } from '../front/answer'
import type { GraphParams } from './params'
import { checkKeyBytes } from '../front/key-length'
import { parseJson } from '../front/parse-json'
import { MAX_ID_BYTES } from './validate'
import type { Operation } from '../contract/messages'
import type { WebhookPolicy } from '../net/webhook-policy'

type Spec = GraphHandler<GraphParams>

export const MAX_URL_BYTES = 2048

/** The body `{"url": "http(s)://..."}`: the URL, normalised (WHATWG URL), if the policy lets it be registered. */
export function webhookUrl(body: Buffer, policy: WebhookPolicy): string {
  const doc = parseJson(body)
  const url = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as { url?: unknown }).url : undefined
  if (typeof url !== 'string') throw new ApiError('bad_request', 'the body must be {"url": "https://..."}: the address to POST events to')
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

function webhookId(rest: string[]): string {
  return checkKeyBytes('webhook id', rest[0]!, MAX_ID_BYTES)
}

/** A route that is one actor call: the operation from the params (and body), the reply as the answer. */
const forward = (body: Spec['body'], operation: (p: GraphParams, body: Buffer | undefined) => Operation): Spec => ({
  body,
  handle(s, ex, params, raw) {
    s.pool.call(params.tenant, operation(params, raw), answer(ex))
  },
})

export const createWebhook: Spec = {
  body: 'json',
  handle(s, ex, { tenant }, raw) {
    s.pool.call(tenant, { op: 'createWebhook', tenant, url: webhookUrl(raw!, s.webhookPolicy) }, answer(ex))
  },
}
export const listWebhooks = forward('none', ({ tenant }) => ({ op: 'listWebhooks', tenant, id: undefined }))
export const getWebhook = forward('none', ({ tenant, rest }) => ({ op: 'listWebhooks', tenant, id: webhookId(rest) }))
export const deleteWebhook = forward('none', ({ tenant, rest }) => ({ op: 'deleteWebhook', tenant, id: webhookId(rest) }))

/** GET .../events/stream without `Upgrade: websocket` (upgrades never reach the HTTP routes). */
export const streamWithoutUpgrade: Spec = {
  body: 'none',
  handle() {
    throw new ApiError('bad_request', 'events/stream is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket); for plain HTTP use GET events?after=&wait=')
  },
}
