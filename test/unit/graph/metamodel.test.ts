import t from 'tap'
import { Metamodel, type MetamodelDoc, type TypeDef } from '../../../src/model/metamodel'

const str = (searchable = false) => ({ type: 'string' as const, searchable })
const int = (searchable = false) => ({ type: 'integer' as const, searchable })

const starCustomer: TypeDef = { owner: 'customer', open: false, properties: { name: str(true), age: int(true), email: str() } }
const acmeCustomer: TypeDef = { owner: 'tenant', open: true, properties: { loyalty: int(true) } }
const starProduct: TypeDef = { owner: 'tenant', open: true, properties: { title: str(true), price: { type: 'number', searchable: false } } }
const starViewed: TypeDef = { owner: 'customer', open: false, properties: { views: int() } }
const acmeViewed: TypeDef = { owner: 'tenant', open: false, properties: { at: int() } }
const acmeOrder: TypeDef = { owner: 'customer', open: false, properties: { total: { type: 'number', searchable: true }, note: str() } }

const doc: MetamodelDoc = {
  '*': {
    nodes: { 'core/customer': starCustomer, 'core/product': starProduct },
    relations: { 'core/customer/core/product/core/viewed': starViewed },
  },
  acme: {
    nodes: { 'core/customer': acmeCustomer, 'shop/order': acmeOrder },
    relations: { 'core/customer/core/product/core/viewed': acmeViewed },
  },
}
const mm = new Metamodel(doc)
const VIEWED = ['core', 'customer', 'core', 'product', 'core', 'viewed'] as const

t.test('a tenant definition replaces the "*" one as a whole', async (t) => {
  t.equal(mm.nodeType('acme', 'core', 'customer'), acmeCustomer)
  t.notOk('name' in (mm.nodeType('acme', 'core', 'customer')?.properties ?? {}), 'no merge of properties with "*"')
  t.equal(mm.nodeType('demo', 'core', 'customer'), starCustomer, 'other tenants see "*"')
  t.equal(mm.nodeType('acme', 'core', 'product'), starProduct, 'types the tenant does not define come from "*"')
  t.equal(mm.nodeType('acme', 'shop', 'order'), acmeOrder)
  t.equal(mm.nodeType('demo', 'shop', 'order'), undefined, "a tenant's own type is not visible to others")
  t.equal(mm.nodeType('demo', 'core', 'nothing'), undefined)
})

t.test('relation types follow the same rule', async (t) => {
  t.equal(mm.relationType('acme', VIEWED), acmeViewed)
  t.equal(mm.relationType('demo', VIEWED), starViewed)
  t.equal(mm.relationType('demo', ['core', 'product', 'core', 'customer', 'core', 'viewed']), undefined, 'direction matters')
})

t.test('an empty metamodel declares nothing', async (t) => {
  const empty = new Metamodel({})
  t.equal(empty.nodeType('demo', 'core', 'customer'), undefined)
  t.equal(empty.relationType('demo', VIEWED), undefined)
  t.same(empty.searchable('demo', 'core', 'customer'), [])
  t.same(empty.forTenant('demo'), { nodes: {}, relations: {} })
})

t.test('searchable lists the searchable properties of the effective type', async (t) => {
  t.same(mm.searchable('demo', 'core', 'customer'), ['name', 'age'])
  t.same(mm.searchable('acme', 'core', 'customer'), ['loyalty'])
  t.same(mm.searchable('acme', 'core', 'product'), ['title'])
  t.same(mm.searchable('acme', 'shop', 'order'), ['total'])
  t.same(mm.searchable('demo', 'shop', 'order'), [], 'undeclared type: nothing is searchable')
})

t.test('forTenant overlays the tenant on "*"', async (t) => {
  t.same(mm.forTenant('acme'), {
    nodes: { 'core/customer': acmeCustomer, 'core/product': starProduct, 'shop/order': acmeOrder },
    relations: { 'core/customer/core/product/core/viewed': acmeViewed },
  })
  t.same(mm.forTenant('demo'), doc['*'])
  t.not(mm.forTenant('demo').nodes, doc['*']?.nodes, 'a copy: callers cannot change the document')
})

t.test('forTenant without a "*" entry', async (t) => {
  const only = new Metamodel({ acme: { nodes: { 'shop/order': acmeOrder }, relations: {} } })
  t.same(only.forTenant('acme'), { nodes: { 'shop/order': acmeOrder }, relations: {} })
  t.same(only.forTenant('demo'), { nodes: {}, relations: {} })
})

t.test('names Object.prototype has are names like any other', async (t) => {
  const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty']
  for (const n of names) {
    t.equal(mm.nodeType(n, 'core', 'customer'), starCustomer, `tenant ${n} sees "*"`)
    t.equal(mm.nodeType('demo', 'core', n), undefined, `node type core/${n}`)
    t.equal(mm.relationType(n, ['core', 'customer', 'core', 'product', 'core', n]), undefined, `relation type .../core/${n}`)
    t.same(mm.searchable(n, 'core', n), [])
    t.same(Object.keys(mm.forTenant(n).nodes), ['core/customer', 'core/product'])
  }
  // As JSON.parse reads a bootstrap file: "__proto__" is then a field of its own.
  const own = new Metamodel(JSON.parse('{"__proto__": {"nodes": {"a/constructor": {"owner": "customer", "open": false, "properties": {"__proto__": {"type": "string", "searchable": true}}}}, "relations": {}}}') as MetamodelDoc)
  t.same(own.nodeType('__proto__', 'a', 'constructor')?.properties, JSON.parse('{"__proto__": {"type": "string", "searchable": true}}'))
  t.same(own.searchable('__proto__', 'a', 'constructor'), ['__proto__'])
  t.equal(own.nodeType('demo', 'a', 'constructor'), undefined, 'another tenant does not see it')
})
