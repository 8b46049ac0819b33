// GET /{tenant}/events?after=&limit=&wait=: the cursor read of the tenant's
// event log (docs/design/contracts.md, Events), with long-poll (src/events/cursor-read.ts).
import { serveEventPage } from '../events/cursor-read'
import { graphMethod } from './services'
import { EventsQuery } from './params'
import { EventPage } from './answers'

export const readEvents = graphMethod({
  body: 'none',
  // Documented here; read (with its own checks) by serveEventPage.
  query: EventsQuery,
  answers: { 200: EventPage },
  errors: ['cursor_expired'],
  summary: "Read the tenant's event log after a cursor (long-poll with wait)",
  handle(s, ex, { tenant }) {
    serveEventPage(s, ex, tenant)
  },
})
