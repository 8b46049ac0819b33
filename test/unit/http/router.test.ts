// The pattern router and the schema compiler (src/http/router.ts,
// src/http/schemas.ts): matching in table order, captures by name, the 405's
// Allow list, the start-up checks of a table, and validation that keeps the
// checks' own messages.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { ApiError } from '../../../src/core/errors'
import { NO_BODY, type RouteMethod, type RouteTable } from '../../../src/http/route'
import { Router } from '../../../src/http/router'
import { CHECK, ERROR_MESSAGE, SchemaCompiler } from '../../../src/http/schemas'

const noop = (): void => {}
const m = (extra: Partial<RouteMethod<unknown, object>> = {}): RouteMethod<unknown, object> => ({ body: 'none', answers: { 204: NO_BODY }, handle: noop, ...extra })
const schemas = new SchemaCompiler({
  short: (v) => { if (v.length > 3) throw new ApiError('bad_request', `"${v}" is longer than 3`) },
  reserved: (v) => { if (v === 'id') throw new ApiError('validation_violation', `"${v}" is reserved`) },
})

const TABLE: RouteTable<unknown, object> = [
  ['nodes/:ns/:type', { HEAD: m(), GET: m() }],
  ['nodes/:ns/:type/:id', { GET: m(), PUT: m({ params: Type.Object({ ns: Type.String(), type: Type.String(), id: Type.String({ [CHECK]: 'short' }) }) }) }],
  ['consents/:ref/grant', { POST: m() }],
  ['consents/grant/:x', { POST: m() }],
]

t.test('matches by pattern and captures by name', async (t) => {
  const router = new Router(TABLE, schemas, { emptyCaptures: true })
  const found = router.match(['graph', 'v1', 't', 'nodes', 'core', 'c', 'a/b'], 3)
  t.equal(found?.route.pattern, 'nodes/:ns/:type/:id')
  t.same(found?.params, { ns: 'core', type: 'c', id: 'a/b' })
  t.equal(router.match(['nodes', 'core'], 0), undefined, 'no pattern of that length')
  t.equal(router.match(['edges', 'a', 'b'], 0), undefined, 'a literal differs')
  t.equal(router.match(['consents', 'grant', 'grant'], 0)?.route.pattern, 'consents/:ref/grant', 'the first in table order wins')
  t.same(router.match(['nodes', '', 'c'], 0)?.params, { ns: '', type: 'c' }, 'empty captures when allowed')
  t.equal(new Router(TABLE, schemas, { emptyCaptures: false }).match(['nodes', '', 'c'], 0), undefined, 'and not otherwise')
  t.equal(router.match(['nodes', 'a', 'b'], 0)?.route.allow, 'HEAD, GET', 'Allow lists the methods in table order')
})

t.test('checkCapture runs on every capture of a match', async (t) => {
  const router = new Router(TABLE, schemas, { emptyCaptures: false, checkCapture: (s) => { if (s.length > 5) throw new ApiError('bad_request', 'long') } })
  t.throws(() => router.match(['nodes', 'core', 'customer'], 0), { message: 'long' })
  t.ok(router.match(['nodes', 'core', 'cust'], 0))
})

t.test('a params schema must name the pattern captures, in order', async (t) => {
  t.throws(() => new Router([['a/:x', { GET: m({ params: Type.Object({ y: Type.String() }) }) }]], schemas, { emptyCaptures: true }), /declares y, the pattern captures x/)
})

t.test('a schema naming an unknown check fails at start-up', async (t) => {
  t.throws(() => schemas.compile(Type.String({ [CHECK]: 'nope' }), 'x'), /unknown check "nope"/)
})

t.test('validation keeps the messages of the checks and of x-error-message', async (t) => {
  const router = new Router(TABLE, schemas, { emptyCaptures: true })
  const put = router.match(['nodes', 'a', 'b', 'c'], 0)!.route.methods.PUT!
  put.params!({ ns: 'a', type: 'b', id: 'abc' })
  t.throws(() => put.params!({ ns: 'a', type: 'b', id: 'abcd' }), new ApiError('bad_request', '"abcd" is longer than 3'))
  const body = schemas.compile(Type.Record(Type.String(), Type.Unknown(), { propertyNames: { type: 'string', [CHECK]: 'reserved' }, [ERROR_MESSAGE]: 'an object, please' }), 'the body')
  body({ a: 1 })
  t.throws(() => body([1]), { message: 'an object, please', type: 'bad_request' })
  t.throws(() => body({ id: 1 }), { message: '"id" is reserved', type: 'validation_violation' })
  const plain = schemas.compile(Type.Object({ n: Type.Integer() }), 'the body')
  t.throws(() => plain({ n: 'x' }), { message: /^the body \/n must be integer/, type: 'bad_request' })
})
