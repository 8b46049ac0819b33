// /{tenant}/relations/{fromNode}/{toNode}/{relationship} and the counter POST.
// The path's parts are checked by their schemas (src/graph/params.ts).
import { graphMethod } from './services'
import { answer } from '../http/answer'
import { traceId, writeContext } from './write-context'
import { checkCounter, checkRelationWrite } from './metamodel-check'
import { CounterParams, RelationParams, RelationProperties, relationOf } from './params'

export const getRelation = graphMethod({
  body: 'none',
  params: RelationParams,
  summary: 'Read a relation',
  handle(s, ex, { tenant, params }) {
    s.pool.call(tenant, { op: 'getRelation', tenant, relation: relationOf(params) }, answer(ex))
  },
})

export const putRelation = graphMethod({
  body: 'json',
  params: RelationParams,
  json: RelationProperties,
  summary: 'Create or replace a relation',
  handle(s, ex, { tenant, params, token, body: props }) {
    const relation = relationOf(params)
    checkRelationWrite(s.metamodel, tenant, relation, props)
    s.pool.call(tenant, { op: 'putRelation', tenant, relation, props, ctx: writeContext(ex, token) }, answer(ex))
  },
})

export const deleteRelation = graphMethod({
  body: 'none',
  params: RelationParams,
  status: 204,
  summary: 'Delete a relation',
  handle(s, ex, { tenant, params }) {
    s.pool.call(tenant, { op: 'deleteRelation', tenant, relation: relationOf(params), trace: traceId(ex) }, answer(ex))
  },
})

/** POST /{tenant}/counters/{fromNode}/{toNode}/{relationship}/{counterName}: no body. */
export const incrementCounter = graphMethod({
  body: 'none',
  params: CounterParams,
  summary: 'Add one to a counter of a relation',
  handle(s, ex, { tenant, params, token }) {
    const relation = relationOf(params)
    const name = params.counter
    checkCounter(s.metamodel, tenant, relation, name)
    s.pool.call(tenant, { op: 'incrementCounter', tenant, relation, name, ctx: writeContext(ex, token) }, answer(ex))
  },
})
