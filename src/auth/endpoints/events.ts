// GET /oauth2/v1/events?after=&limit=&wait=&schema=: the subscription events
// of the platform.authorization topic (scope platform.admin), with the
// graph's cursor and long-poll rules. `schema=subscriptionCreated_v2` or
// `_v1` asks for the deprecated payloads of subscriptionCreated.
import { ApiError } from '../../core/errors'
import { serveEventPage } from '../../events/cursor-read'
import { AUTH_EVENT_LOG, CREATED_SCHEMAS, rewritePage, type CreatedSchema } from '../../events/subscription-events'
import { admin } from './admin/common'
import { SubscriptionEventPage } from './answers'

export const eventsEndpoint = admin({
  body: 'none',
  answers: { 200: SubscriptionEventPage },
  errors: ['bad_request', 'cursor_expired'],
  summary: 'The subscription events (spec section 6), after a cursor (long-poll with wait)',
  handle(s, ex) {
    const asked = ex.query.get('schema') ?? 'subscriptionCreated_v3'
    if (!(CREATED_SCHEMAS as readonly string[]).includes(asked)) {
      throw new ApiError('bad_request', `schema must be one of ${CREATED_SCHEMAS.join(', ')}`)
    }
    serveEventPage(s, ex, AUTH_EVENT_LOG, (body) => rewritePage(body, asked as CreatedSchema))
  },
})
