// /{tenant}/nodes/...: count (HEAD), list, and a node and its properties.
// The path's parts are checked by their schemas (src/graph/params.ts).
import { ApiError } from '../core/errors'
import { graphMethod } from './services'
import { streamFormat, streamScan } from '../http/stream'
import { answer } from '../http/answer'
import { DELETE_HEADERS, traceId, WRITE_HEADERS, writeContext } from './write-context'
import { NO_BODY, NodeCount, NodeList, NodeOrLocked, PropertyValueAnswer } from './answers'
import { Type } from '@sinclair/typebox'
import { checkNodeWrite } from './metamodel-check'
import { ListQuery, NodeParams, NodeProperties, NodePropertyParams, NodeTypeParams, PropertyValue } from './params'
import { parseCriterion } from './query-q'
import { limitParam } from './validate'

export const countNodes = graphMethod({
  body: 'none',
  params: NodeTypeParams,
  answers: { 200: NodeCount },
  summary: 'Count the nodes of a type (X-Total-Count)',
  handle(s, ex, { tenant, params: { ns, type } }) {
    s.pool.call(tenant, { op: 'countNodes', tenant, ns, type }, answer(ex))
  },
})

export const listNodes = graphMethod({
  body: 'none',
  params: NodeTypeParams,
  query: ListQuery,
  headers: Type.Object({
    'consent-reference': Type.Optional(Type.String({ description: 'only the nodes it owns and tenant-owned ones; without it all nodes of the type' })),
    accept: Type.Optional(Type.String({ description: 'application/x-ndjson: one node per line' })),
  }),
  answers: { 200: NodeList },
  errors: ['validation_violation'],
  summary: 'List the nodes of a type (streamed; JSON array or NDJSON)',
  handle(s, ex, { tenant, params: { ns, type }, query }) {
    const limit = limitParam(query.limit ?? null)
    const criterion = query.q === undefined ? undefined : parseCriterion(query.q)
    if (criterion !== undefined && !s.metamodel.searchable(tenant, ns, type).includes(criterion.property)) {
      throw new ApiError('validation_violation', `property "${criterion.property}" of ${ns}/${type} is not searchable`)
    }
    const ref = ex.headers['consent-reference'].trim()
    const owner = ref === '' ? undefined : ref
    const format = streamFormat(ex.headers.accept)
    streamScan(ex, format, s.streamBuffers, (onReply) => s.pool.openStream(tenant, { op: 'listNodes', tenant, ns, type, limit, owner, criterion, format }, onReply))
  },
})

export const getNode = graphMethod({
  body: 'none',
  params: NodeParams,
  answers: { 200: NodeOrLocked },
  errors: ['element_not_found', 'consent_revoked'],
  summary: 'Read a node',
  handle(s, ex, { tenant, params: node }) {
    s.pool.call(tenant, { op: 'getNode', tenant, node }, answer(ex))
  },
})

export const putNode = graphMethod({
  body: 'json',
  params: NodeParams,
  json: NodeProperties,
  headers: WRITE_HEADERS,
  answers: { 204: NO_BODY },
  errors: ['validation_violation', 'forbidden', 'insufficient_storage'],
  summary: 'Create or update a node (the named properties)',
  handle(s, ex, { tenant, params: node, token, body: props }) {
    checkNodeWrite(s.metamodel, tenant, node, props)
    s.pool.call(tenant, { op: 'putNode', tenant, node, props, ctx: writeContext(ex, token) }, answer(ex))
  },
})

export const deleteNode = graphMethod({
  body: 'none',
  params: NodeParams,
  headers: DELETE_HEADERS,
  answers: { 204: NO_BODY },
  errors: ['insufficient_storage'],
  summary: 'Delete a node and its relations',
  handle(s, ex, { tenant, params: node }) {
    s.pool.call(tenant, { op: 'deleteNode', tenant, node, trace: traceId(ex) }, answer(ex))
  },
})

export const getNodeProperty = graphMethod({
  body: 'none',
  params: NodePropertyParams,
  answers: { 200: PropertyValueAnswer },
  errors: ['element_not_found', 'consent_revoked'],
  summary: 'Read one property of a node',
  handle(s, ex, { tenant, params: { ns, type, id, key } }) {
    s.pool.call(tenant, { op: 'getNodeProperty', tenant, node: { ns, type, id }, key }, answer(ex))
  },
})

export const putNodeProperty = graphMethod({
  body: 'json',
  params: NodePropertyParams,
  json: PropertyValue,
  headers: WRITE_HEADERS,
  answers: { 204: NO_BODY },
  errors: ['validation_violation', 'forbidden', 'insufficient_storage'],
  summary: 'Set one property of a node',
  handle(s, ex, { tenant, params: { ns, type, id, key }, token, body: value }) {
    const node = { ns, type, id }
    checkNodeWrite(s.metamodel, tenant, node, { [key]: value })
    s.pool.call(tenant, { op: 'putNodeProperty', tenant, node, key, value, ctx: writeContext(ex, token) }, answer(ex))
  },
})
