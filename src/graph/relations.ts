// /{tenant}/relations/{fromNode}/{toNode}/{relationship} and the counter POST.
import type { GraphHandler } from './services'
import { answer } from '../front/answer'
import { traceId, writeContext } from './write-context'
import { checkCounter, checkRelationWrite } from './metamodel-check'
import type { GraphParams } from './params'
import { RESERVED_RELATION_NAMES, counterName, propertiesBody, relationRef } from './validate'

type Spec = GraphHandler<GraphParams>

export const getRelation: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    s.pool.call(tenant, { op: 'getRelation', tenant, relation: relationRef(rest) }, answer(ex))
  },
}

export const putRelation: Spec = {
  body: 'json',
  handle(s, ex, { tenant, rest, token }, body) {
    const relation = relationRef(rest)
    const props = propertiesBody(body!, RESERVED_RELATION_NAMES)
    checkRelationWrite(s.metamodel, tenant, relation, props)
    s.pool.call(tenant, { op: 'putRelation', tenant, relation, props, ctx: writeContext(ex, token) }, answer(ex))
  },
}

export const deleteRelation: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    s.pool.call(tenant, { op: 'deleteRelation', tenant, relation: relationRef(rest), trace: traceId(ex) }, answer(ex))
  },
}

/** POST /{tenant}/counters/{fromNode}/{toNode}/{relationship}/{counterName}: no body. */
export const incrementCounter: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest, token }) {
    const relation = relationRef(rest)
    const name = counterName(rest[9]!)
    checkCounter(s.metamodel, tenant, relation, name)
    s.pool.call(tenant, { op: 'incrementCounter', tenant, relation, name, ctx: writeContext(ex, token) }, answer(ex))
  },
}
