// The first bad field of a value (src/schema/field-error.ts): the one a reader
// walking the value meets first, whatever ajv checked first.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { SchemaCompiler } from '../../../src/schema/compiler'

const compiler = new SchemaCompiler({})
const check = compiler.fields(Type.Object({
  id: Type.String({ pattern: '^[a-z]+$' }),
  org: Type.String(),
  list: Type.Optional(Type.Array(Type.String({ maxLength: 2 }))),
  roles: Type.Optional(Type.Unsafe<Record<string, string[]>>({ type: 'object', propertyNames: { type: 'string', pattern: '^[a-z]+$' }, additionalProperties: { type: 'array' } })),
}))

t.equal(check({ id: 'a', org: 'o' }), undefined, 'a fitting value has none')
t.match(check({ id: 'A' }), { kind: 'rule', path: ['id'], keyword: 'pattern', value: 'A' }, 'a declared field before a missing later one')
t.match(check({ id: 'a' }), { kind: 'shape', path: ['org'], keyword: 'required', value: undefined, schema: { type: 'string' } }, 'a missing field, with its schema')
t.match(check({ org: 'o', list: ['ok', 'long', 7] }), { kind: 'shape', path: ['id'] }, 'declared order, not the order ajv checks in')
t.match(check({ id: 'a', org: 'o', list: ['ok', 7, 'long'] }), { kind: 'shape', path: ['list', 1], keyword: 'type' }, 'items by index')
t.match(check({ id: 'a', org: 'o', roles: { ok: 1, 'B C': 'x' } }), { kind: 'shape', path: ['roles', 'ok'] }, "a record's entries in the value's key order")
t.match(check({ id: 'a', org: 'o', roles: { 'B C': 'x' } }), { kind: 'key', path: ['roles', 'B C'], value: 'B C' }, "an entry's key before its value")
t.match(check([]), { kind: 'shape', path: [], keyword: 'type' }, 'the root itself')
