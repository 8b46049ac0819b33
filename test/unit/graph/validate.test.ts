import t from 'tap'
import { ApiError } from '../../../src/core/errors'
import {
  consentReference, counterName, GRAPH_CHECKS, limitParam, MAX_ID_BYTES, MAX_NAME_BYTES, MAX_PROPERTY_BYTES, nodeRef,
  propertyKey, relationRef, RESERVED_BODY_NAMES, RESERVED_PROPERTY_KEYS, tenantSegment,
} from '../../../src/graph/validate'
import { NodeProperties } from '../../../src/graph/params'
import { SchemaCompiler } from '../../../src/http/schemas'
import { parseJson } from '../../../src/http/parse-json'

/** A PUT node body as the dispatcher reads it: parsed, then validated by its schema. */
const validateProperties = new SchemaCompiler(GRAPH_CHECKS).compile(NodeProperties, 'the request body')
function propertiesBody(b: Buffer): unknown {
  const value = parseJson(b)
  validateProperties(value)
  return value
}

function apiError(t: tap.Test, fn: () => unknown, type: string, pattern?: RegExp | string): void {
  const err = t.throws(fn) as ApiError
  t.ok(err instanceof ApiError, 'an ApiError')
  t.equal(err.type, type)
  t.equal(err.status, 400)
  if (pattern !== undefined) t.match(err.message, pattern)
}
const body = (v: unknown): Buffer => Buffer.from(JSON.stringify(v))
const SPEC_RESERVED = ['id', 'tid', 'fid', 'label', 'schema', 'created', 'consentReference']

t.test('the reserved sets', async (t) => {
  for (const n of [...SPEC_RESERVED, 'createdByHybrisClient', 'tenant', 'consent-reference']) t.ok(RESERVED_BODY_NAMES.has(n), `${n} reserved in bodies`)
  for (const n of [...SPEC_RESERVED, 'tenant', 'consent-reference']) t.ok(RESERVED_PROPERTY_KEYS.has(n), `${n} reserved as property key`)
  t.notOk(RESERVED_PROPERTY_KEYS.has('createdByHybrisClient'), 'spec 7: property keys may be createdByHybrisClient')
})

t.test('body: every reserved name is refused with validation_violation', async (t) => {
  for (const name of [...SPEC_RESERVED, 'createdByHybrisClient', 'tenant', 'consent-reference']) {
    apiError(t, () => propertiesBody(body({ ok: 1, [name]: 'x' })), 'validation_violation', `"${name}" is a reserved property name`)
  }
})

t.test('property key: createdByHybrisClient is allowed, tenant and consent-reference are not', async (t) => {
  t.equal(propertyKey('createdByHybrisClient'), 'createdByHybrisClient')
  t.equal(propertyKey('name'), 'name')
  for (const key of [...SPEC_RESERVED, 'tenant', 'consent-reference']) {
    apiError(t, () => propertyKey(key), 'validation_violation', `"${key}" is a reserved property name and cannot be set`)
  }
})

t.test('reserved names are case-sensitive', async (t) => {
  t.equal(propertyKey('ID'), 'ID')
  t.same(propertiesBody(body({ Tenant: 1, Schema: 2 })), { Tenant: 1, Schema: 2 })
})

t.test('a valid body comes back as the object', async (t) => {
  const props = { name: 'Ann', age: 42, tags: ['x'], nested: { id: 'inner ids are fine' }, nothing: null }
  t.same(propertiesBody(body(props)), props)
  t.same(propertiesBody(body({})), {})
})

t.test('body shape errors are bad_request', async (t) => {
  apiError(t, () => propertiesBody(Buffer.alloc(0)), 'bad_request', /body is empty/)
  apiError(t, () => propertiesBody(Buffer.from('{"a":')), 'bad_request', /not valid JSON/)
  apiError(t, () => propertiesBody(body([1, 2])), 'bad_request', /must be a JSON object of properties/)
  apiError(t, () => propertiesBody(body(null)), 'bad_request', /must be a JSON object/)
  apiError(t, () => propertiesBody(body('text')), 'bad_request', /must be a JSON object/)
  apiError(t, () => propertiesBody(body({ '': 1 })), 'bad_request', 'property name must not be empty')
})

t.test('parseJson takes any JSON value', async (t) => {
  t.equal(parseJson(Buffer.from('42')), 42)
  t.equal(parseJson(Buffer.from('"x"')), 'x')
  t.equal(parseJson(Buffer.from('null')), null)
  apiError(t, () => parseJson(Buffer.from('undefined')), 'bad_request', /not valid JSON/)
})

t.test('parseJson reads UTF-8 only, and ignores a leading byte order mark', async (t) => {
  t.same(parseJson(Buffer.from('\ufeff{"a":"é"}')), { a: 'é' })
  apiError(t, () => parseJson(Buffer.from([0x22, 0xff, 0x22])), 'bad_request', 'the request body is not valid JSON: it is not valid UTF-8')
  apiError(t, () => parseJson(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])), 'bad_request', /not valid UTF-8/) // an encoded lone surrogate
  t.equal(parseJson(Buffer.from('"\\ud800"')), '\ud800', 'an escaped one is JSON')
})

t.test('length limits are in UTF-8 bytes', async (t) => {
  t.equal(MAX_NAME_BYTES, 64)
  t.equal(MAX_ID_BYTES, 384)
  t.equal(MAX_PROPERTY_BYTES, 128)
  t.equal(tenantSegment('t'.repeat(64)), 't'.repeat(64))
  apiError(t, () => tenantSegment('t'.repeat(65)), 'bad_request', 'tenant is longer than 64 bytes')
  apiError(t, () => tenantSegment(''), 'bad_request', 'tenant must not be empty')
  t.equal(tenantSegment('é'.repeat(32)), 'é'.repeat(32), '32 two-byte characters fit')
  apiError(t, () => tenantSegment('é'.repeat(33)), 'bad_request', /longer than 64 bytes/)

  t.equal(propertyKey('k'.repeat(128)), 'k'.repeat(128))
  apiError(t, () => propertyKey('k'.repeat(129)), 'bad_request', 'property key is longer than 128 bytes')
  apiError(t, () => propertyKey(''), 'bad_request', 'property key must not be empty')
  apiError(t, () => propertiesBody(body({ ['p'.repeat(129)]: 1 })), 'bad_request', 'property name is longer than 128 bytes')
  t.same(propertiesBody(body({ ['p'.repeat(128)]: 1 })), { ['p'.repeat(128)]: 1 })
})

t.test('nodeRef and relationRef', async (t) => {
  t.same(nodeRef('core', 'customer', 'a/b c'), { ns: 'core', type: 'customer', id: 'a/b c' })
  t.equal(nodeRef('core', 'customer', 'i'.repeat(384)).id.length, 384)
  apiError(t, () => nodeRef('core', 'customer', 'i'.repeat(385)), 'bad_request', 'node id is longer than 384 bytes')
  apiError(t, () => nodeRef('n'.repeat(65), 'customer', 'x'), 'bad_request', 'node namespace is longer than 64 bytes')
  apiError(t, () => nodeRef('core', '', 'x'), 'bad_request', 'node type must not be empty')
  t.same(relationRef(['a', 'b', '1', 'c', 'd', '2', 'e', 'f', '3']), {
    from: { ns: 'a', type: 'b', id: '1' }, to: { ns: 'c', type: 'd', id: '2' }, rel: { ns: 'e', type: 'f', id: '3' },
  })
  apiError(t, () => relationRef(['a', 'b', '1', 'c', 'd', '', 'e', 'f', '3']), 'bad_request', 'target node id must not be empty')
  apiError(t, () => relationRef(['a', 'b', '1', 'c', 'd', '2', 'e', 'f'.repeat(65), '3']), 'bad_request', 'relationship type is longer than 64 bytes')
  apiError(t, () => relationRef(['', 'b', '1', 'c', 'd', '2', 'e', 'f', '3']), 'bad_request', 'source node namespace must not be empty')
})

t.test('counter names', async (t) => {
  t.equal(counterName('views'), 'views')
  for (const n of ['toCreated', 'fromCreated', 'relationCreated', 'id', 'created', 'createdByHybrisClient', 'tenant']) {
    apiError(t, () => counterName(n), 'validation_violation', `"${n}" is a reserved name and cannot be a counter`)
  }
  apiError(t, () => counterName(''), 'bad_request', 'counter name must not be empty')
  apiError(t, () => counterName('c'.repeat(129)), 'bad_request', /longer than 128 bytes/)
})

t.test('consentReference is required, trimmed and bounded', async (t) => {
  t.equal(consentReference('ref-1'), 'ref-1')
  t.equal(consentReference('  ref-1 \t'), 'ref-1')
  apiError(t, () => consentReference(''), 'bad_request', 'the consent-reference header is required to create or modify data')
  apiError(t, () => consentReference('   '), 'bad_request', /consent-reference header is required/)
  t.equal(consentReference('r'.repeat(384)).length, 384)
  apiError(t, () => consentReference('r'.repeat(385)), 'bad_request', 'consent-reference is longer than 384 bytes')
})

t.test('limitParam', async (t) => {
  t.equal(limitParam(null), undefined, 'absent: no limit')
  t.equal(limitParam('0'), 0)
  t.equal(limitParam('10'), 10)
  t.equal(limitParam('007'), 7)
  t.equal(limitParam('999999999'), 999_999_999)
  for (const bad of ['', '-1', '1.5', 'ten', '1e3', ' 5', '1000000000', '+3']) {
    apiError(t, () => limitParam(bad), 'bad_request', `limit must be a whole number from 0 to 999999999, got "${bad}"`)
  }
})

t.test('limits count what a key stores: U+0000 to U+0004 take two bytes', async (t) => {
  t.equal(nodeRef('core', 'customer', '\u0000'.repeat(192)).id.length, 192, '192 NULs are 384 bytes')
  apiError(t, () => nodeRef('core', 'customer', '\u0000'.repeat(193)), 'bad_request',
    'node id is longer than 384 bytes (the characters U+0000 to U+0004 count two bytes each)')
  apiError(t, () => nodeRef('core', 'customer', 'é'.repeat(193)), 'bad_request', 'node id is longer than 384 bytes')
  t.equal(nodeRef('\u0004'.repeat(32), 'customer', 'x').ns.length, 32)
  apiError(t, () => nodeRef('\u0004'.repeat(33), 'customer', 'x'), 'bad_request', /node namespace is longer than 64 bytes/)
  apiError(t, () => consentReference('\u0001'.repeat(193)), 'bad_request', /consent-reference is longer than 384 bytes/)
})
