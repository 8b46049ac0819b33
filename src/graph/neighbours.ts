// GET /{tenant}/neighbours/{fromNode}: streamed, source node first.
import type { GraphHandler } from './services'
import { streamFormat, streamScan } from '../front/stream'
import type { GraphParams } from './params'
import { nodeRef } from './validate'

export const getNeighbours: GraphHandler<GraphParams> = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    const node = nodeRef(rest[0]!, rest[1]!, rest[2]!)
    streamScan(ex, streamFormat(ex.headers.accept), (onReply) =>
      s.pool.openStream(tenant, { op: 'neighbours', tenant, node }, onReply))
  },
}
