// GET /{tenant}/events?after=&limit=&wait=: the cursor read of the tenant's
// event log (docs/contracts.md, Events), with long-poll (src/events/cursor-read.ts).
import { serveEventPage } from '../events/cursor-read'
import type { GraphHandler } from './services'
import type { GraphParams } from './params'

export const readEvents: GraphHandler<GraphParams> = {
  body: 'none',
  handle(s, ex, { tenant }) {
    serveEventPage(s, ex, tenant)
  },
}
