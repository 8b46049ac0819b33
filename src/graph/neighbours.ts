// GET /{tenant}/neighbours/{fromNode}: streamed, source node first.
import { graphMethod } from './services'
import { streamFormat, streamScan } from '../http/stream'
import { NodeParams } from './params'
import { Neighbours } from './answers'
import { Type } from '@sinclair/typebox'

export const getNeighbours = graphMethod({
  body: 'none',
  params: NodeParams,
  headers: Type.Object({ accept: Type.Optional(Type.String({ description: 'application/x-ndjson: one chunk per line' })) }),
  answers: { 200: Neighbours },
  errors: ['element_not_found'],
  summary: 'The node and its neighbours (streamed)',
  handle(s, ex, { tenant, params: node }) {
    const format = streamFormat(ex.headers.accept)
    streamScan(ex, format, s.streamBuffers, (onReply) => s.pool.openStream(tenant, { op: 'neighbours', tenant, node, format }, onReply))
  },
})
