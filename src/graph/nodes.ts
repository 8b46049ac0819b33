// /{tenant}/nodes/...: count (HEAD), list, and a node and its properties.
import { ApiError } from '../errors'
import type { GraphHandler } from './services'
import { streamFormat, streamScan } from '../front/stream'
import { answer } from '../front/answer'
import { traceId, writeContext } from './write-context'
import { checkNodeWrite } from './metamodel-check'
import type { GraphParams } from './params'
import { parseCriterion } from './query-q'
import { parseJson } from '../front/parse-json'
import { limitParam, nodeRef, propertiesBody, propertyKey } from './validate'

type Spec = GraphHandler<GraphParams>

export const countNodes: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    const { ns, type } = nodeRef(rest[0]!, rest[1]!, '-')
    s.pool.call(tenant, { op: 'countNodes', tenant, ns, type }, answer(ex))
  },
}

export const listNodes: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    const { ns, type } = nodeRef(rest[0]!, rest[1]!, '-')
    const query = ex.query
    const limit = limitParam(query.get('limit'))
    const q = query.get('q')
    const criterion = q === null ? undefined : parseCriterion(q)
    if (criterion !== undefined && !s.metamodel.searchable(tenant, ns, type).includes(criterion.property)) {
      throw new ApiError('validation_violation', `property "${criterion.property}" of ${ns}/${type} is not searchable`)
    }
    const ref = ex.headers['consent-reference'].trim()
    const owner = ref === '' ? undefined : ref
    streamScan(ex, streamFormat(ex.headers.accept), (onReply) =>
      s.pool.openStream(tenant, { op: 'listNodes', tenant, ns, type, limit, owner, criterion }, onReply))
  },
}

export const getNode: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    s.pool.call(tenant, { op: 'getNode', tenant, node: nodeRef(rest[0]!, rest[1]!, rest[2]!) }, answer(ex))
  },
}

export const putNode: Spec = {
  body: 'json',
  handle(s, ex, { tenant, rest, token }, body) {
    const node = nodeRef(rest[0]!, rest[1]!, rest[2]!)
    const props = propertiesBody(body!)
    checkNodeWrite(s.metamodel, tenant, node, props)
    s.pool.call(tenant, { op: 'putNode', tenant, node, props, ctx: writeContext(ex, token) }, answer(ex))
  },
}

export const deleteNode: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    s.pool.call(tenant, { op: 'deleteNode', tenant, node: nodeRef(rest[0]!, rest[1]!, rest[2]!), trace: traceId(ex) }, answer(ex))
  },
}

export const getNodeProperty: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    const node = nodeRef(rest[0]!, rest[1]!, rest[2]!)
    s.pool.call(tenant, { op: 'getNodeProperty', tenant, node, key: rest[3]! }, answer(ex))
  },
}

export const putNodeProperty: Spec = {
  body: 'json',
  handle(s, ex, { tenant, rest, token }, body) {
    const node = nodeRef(rest[0]!, rest[1]!, rest[2]!)
    const key = propertyKey(rest[3]!)
    const value = parseJson(body!)
    checkNodeWrite(s.metamodel, tenant, node, { [key]: value })
    s.pool.call(tenant, { op: 'putNodeProperty', tenant, node, key, value, ctx: writeContext(ex, token) }, answer(ex))
  },
}
