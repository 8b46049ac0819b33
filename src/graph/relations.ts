// /{tenant}/relations/{fromNode}/{toNode}/{relationship} and the counter POST.
// The path's parts are checked by their schemas (src/graph/params.ts).
import { graphMethod } from './services'
import { answer } from '../http/answer'
import { DELETE_HEADERS, traceId, WRITE_HEADERS, writeContext } from './write-context'
import { CounterResult, NO_BODY, RelationObject, LockedPlaceholder } from './answers'
import { Type } from '@sinclair/typebox'
import { checkCounter, checkRelationWrite } from './metamodel-check'
import { CounterParams, RelationParams, RelationProperties, relationOf } from './params'

export const getRelation = graphMethod({
  body: 'none',
  params: RelationParams,
  answers: { 200: Type.Union([RelationObject, LockedPlaceholder]) },
  errors: ['element_not_found', 'consent_revoked'],
  summary: 'Read a relation',
  handle(s, ex, { tenant, params }) {
    s.pool.call(tenant, { op: 'getRelation', tenant, relation: relationOf(params) }, answer(ex))
  },
})

export const putRelation = graphMethod({
  body: 'json',
  params: RelationParams,
  json: RelationProperties,
  headers: WRITE_HEADERS,
  answers: { 204: NO_BODY },
  errors: ['validation_violation', 'forbidden', 'insufficient_storage'],
  summary: 'Create or update a relation (missing end nodes are created)',
  handle(s, ex, { tenant, params, token, body: props }) {
    const relation = relationOf(params)
    checkRelationWrite(s.metamodel, tenant, relation, props)
    s.pool.call(tenant, { op: 'putRelation', tenant, relation, props, ctx: writeContext(ex, token) }, answer(ex))
  },
})

export const deleteRelation = graphMethod({
  body: 'none',
  params: RelationParams,
  headers: DELETE_HEADERS,
  answers: { 204: NO_BODY },
  errors: ['insufficient_storage'],
  summary: 'Delete a relation',
  handle(s, ex, { tenant, params }) {
    s.pool.call(tenant, { op: 'deleteRelation', tenant, relation: relationOf(params), trace: traceId(ex) }, answer(ex))
  },
})

/** POST /{tenant}/counters/{fromNode}/{toNode}/{relationship}/{counterName}: no body. */
export const incrementCounter = graphMethod({
  body: 'none',
  params: CounterParams,
  headers: WRITE_HEADERS,
  answers: { 200: CounterResult },
  errors: ['validation_violation', 'forbidden', 'insufficient_storage'],
  summary: 'Add one to a counter of a relation',
  handle(s, ex, { tenant, params, token }) {
    const relation = relationOf(params)
    const name = params.counter
    checkCounter(s.metamodel, tenant, relation, name)
    s.pool.call(tenant, { op: 'incrementCounter', tenant, relation, name, ctx: writeContext(ex, token) }, answer(ex))
  },
})
