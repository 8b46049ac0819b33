// The metamodel's checks of a write (src/graph/metamodel-check.ts): every
// message, and which values each property type takes (null always does).
import t from 'tap'
import { checkCounter, checkNodeWrite, checkRelationWrite } from '../../../src/graph/metamodel-check'
import { Metamodel, PROPERTY_TYPES, type PropertyType } from '../../../src/model/metamodel'
import { ApiError } from '../../../src/core/errors'

const properties = Object.fromEntries(PROPERTY_TYPES.map((type) => [type, { type, searchable: false }]))
const mm = new Metamodel({
  '*': {
    nodes: { 'core/typed': { owner: 'customer', open: false, properties }, 'core/open': { owner: 'customer', open: true, properties: { n: { type: 'integer', searchable: false } } } },
    relations: { 'core/typed/core/typed/core/knows': { owner: 'customer', open: false, properties: { clicks: { type: 'integer', searchable: false }, label: { type: 'string', searchable: false } } } },
  },
})
const node = (type: string) => ({ ns: 'core', type, id: 'x' })
const rel = (relType = 'knows') => ({ from: node('typed'), to: node('typed'), rel: { ns: 'core', type: relType, id: 'r' } })
const refused = (message: string) => new ApiError('validation_violation', message)

const FITTING: Record<PropertyType, unknown[]> = {
  string: ['', 'a'], integer: [0, -0, 42, -7, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e3], number: [0, 1.5, -2e300],
  boolean: [true, false], object: [{}, { a: [1] }], array: [[], [1, 'a']], any: ['a', 1, {}, [], true],
}
const MISFITTING: Record<PropertyType, unknown[]> = {
  string: [1, true, {}, []], integer: [1.5, Number.MAX_SAFE_INTEGER + 1, 2 ** 60, '1', true, {}], number: ['1', true, [], {}],
  boolean: [0, 'true', {}], object: [[], 'a', 1], array: [{}, 'a', 1], any: [],
}

t.test('each property type takes its values and null, and no other', async (t) => {
  for (const type of PROPERTY_TYPES) {
    for (const v of [null, ...FITTING[type]]) t.doesNotThrow(() => checkNodeWrite(mm, 'demo', node('typed'), { [type]: v }), `${type} takes ${JSON.stringify(v)}`)
    for (const v of MISFITTING[type]) {
      t.throws(() => checkNodeWrite(mm, 'demo', node('typed'), { [type]: v }), refused(`property "${type}" of node type core/typed must be of type ${type}`), `${type} refuses ${JSON.stringify(v)}`)
    }
  }
})

t.test('undeclared types and properties; the first bad property in the body order', async (t) => {
  t.throws(() => checkNodeWrite(mm, 'demo', node('nope'), {}), refused('node type core/nope is not declared in the metamodel'))
  t.throws(() => checkNodeWrite(mm, 'demo', node('typed'), { string: 'ok', extra: 1, integer: 'x' }), refused('property "extra" is not declared for node type core/typed'))
  t.throws(() => checkNodeWrite(mm, 'demo', node('typed'), { integer: 'x', extra: 1 }), refused('property "integer" of node type core/typed must be of type integer'))
  t.doesNotThrow(() => checkNodeWrite(mm, 'demo', node('open'), { anything: [1], n: null }), 'an open type takes undeclared properties')
  t.throws(() => checkNodeWrite(mm, 'demo', node('open'), { anything: 1, n: 1.5 }), refused('property "n" of node type core/open must be of type integer'))
  t.throws(() => checkRelationWrite(mm, 'demo', rel('likes'), {}), refused('relation type core/typed/core/typed/core/likes is not declared in the metamodel'))
  t.throws(() => checkRelationWrite(mm, 'demo', rel(), { label: 5 }), refused('property "label" of relation type core/knows must be of type string'))
  t.throws(() => checkRelationWrite(mm, 'demo', rel(), { other: 5 }), refused('property "other" is not declared for relation type core/knows'))
  t.doesNotThrow(() => checkCounter(mm, 'demo', rel(), 'clicks'))
  t.throws(() => checkCounter(mm, 'demo', rel(), 'label'), refused('counter "label" must be a declared integer property of relation type core/knows'))
  t.throws(() => checkCounter(mm, 'demo', rel(), 'nope'), refused('counter "nope" must be a declared integer property of relation type core/knows'))
})

t.test('property and counter names Object.prototype has are checked like any other', async (t) => {
  for (const n of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty']) {
    const props = JSON.parse(`{"${n}": "x"}`) as Record<string, unknown>
    t.throws(() => checkNodeWrite(mm, 'demo', node('typed'), props), refused(`property "${n}" is not declared for node type core/typed`))
    t.doesNotThrow(() => checkNodeWrite(mm, 'demo', node('open'), props), `an open type takes ${n}`)
    t.throws(() => checkRelationWrite(mm, 'demo', rel(), props), refused(`property "${n}" is not declared for relation type core/knows`))
    t.throws(() => checkCounter(mm, 'demo', rel(), n), refused(`counter "${n}" must be a declared integer property of relation type core/knows`))
    t.throws(() => checkNodeWrite(mm, n, node('nope'), {}), refused('node type core/nope is not declared in the metamodel'), `tenant ${n}`)
  }
})
