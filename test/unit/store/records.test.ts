import t from 'tap'
import { Urls } from '../../../src/contract/urls'
import type { NodeRef, RelationRef } from '../../../src/contract/messages'
import { counterResult, nodeChunk, nodeObject, relationChunk, relationObject, type ElementRecord } from '../../../workers/store/records'

const BASE = 'http://127.0.0.1:8080'
const urls = new Urls(BASE)
const META = `${BASE}/graph/v1/demo/metamodel`

const customer: NodeRef = { ns: 'core', type: 'customer', id: 'c1' }
const product: NodeRef = { ns: 'core', type: 'product', id: 'p1' }
const viewed: RelationRef = { from: customer, to: product, rel: { ns: 'core', type: 'viewed', id: 'v1' } }

const rec = (p: string, c = 1_700_000_000_000, o = 'consent-1', b = 'demo-enricher'): ElementRecord => ({ c, b, o, p })

/** Keys that occur twice in one object of a JSON text (JSON.parse would silently keep the last). */
function duplicateKeys(text: string): string[] {
  const stack: (Set<string> | null)[] = []
  const dups: string[] = []
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (ch === '"') {
      let j = i + 1
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      const top = stack[stack.length - 1]
      if (expectKey && top) {
        const key = JSON.parse(text.slice(i, j + 1)) as string
        if (top.has(key)) dups.push(key)
        top.add(key)
      }
      expectKey = false
      i = j
    } else if (ch === '{') { stack.push(new Set()); expectKey = true }
    else if (ch === '[') { stack.push(null); expectKey = false }
    else if (ch === '}' || ch === ']') { stack.pop(); expectKey = false }
    else if (ch === ',') expectKey = stack[stack.length - 1] != null
  }
  return dups
}

t.test('duplicateKeys helper finds duplicates only within one object', async (t) => {
  t.same(duplicateKeys('{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}'), [])
  t.same(duplicateKeys('{"a":1,"b":"\\"a\\"","a":2}'), ['a'])
})

t.test('Urls builds the schema and neighbours addresses', async (t) => {
  t.equal(urls.graphBase, `${BASE}/graph/v1`)
  t.equal(urls.metamodel('demo'), META)
  t.equal(urls.nodeSchema('demo', 'core', 'customer'), `${META}/nodes/core/customer`)
  t.equal(urls.relationSchema('demo', viewed), `${META}/relations/core/customer/core/product/core/viewed`)
  t.equal(urls.neighbours('demo', customer), `${BASE}/graph/v1/demo/neighbours/core/customer/c1`)
})

t.test('nodeObject: exact JSON, system fields then custom properties at the top level', async (t) => {
  const json = nodeObject(urls, 'demo', customer, rec('{"name":"Ann","age":42}'))
  t.equal(json,
    `{"id":"c1","consent-reference":"consent-1","created":1700000000000,"createdByHybrisClient":"demo-enricher","tenant":"demo","schema":"${META}/nodes/core/customer","name":"Ann","age":42}`)
  t.same(JSON.parse(json), {
    id: 'c1', 'consent-reference': 'consent-1', created: 1_700_000_000_000, createdByHybrisClient: 'demo-enricher',
    tenant: 'demo', schema: `${META}/nodes/core/customer`, name: 'Ann', age: 42,
  })
})

t.test('nodeObject without custom properties, and for tenant-owned data', async (t) => {
  t.equal(nodeObject(urls, 'demo', product, rec('{}', 5, 'TENANT')),
    `{"id":"p1","consent-reference":"TENANT","created":5,"createdByHybrisClient":"demo-enricher","tenant":"demo","schema":"${META}/nodes/core/product"}`)
})

t.test('nodeObject: a custom createdByHybrisClient does not duplicate the system field', async (t) => {
  const json = nodeObject(urls, 'demo', customer, rec('{"a":1,"createdByHybrisClient":"spoofed","b":[2]}'))
  t.same(duplicateKeys(json), [])
  t.equal(json,
    `{"id":"c1","consent-reference":"consent-1","created":1700000000000,"createdByHybrisClient":"demo-enricher","tenant":"demo","schema":"${META}/nodes/core/customer","a":1,"b":[2]}`)
  t.equal((JSON.parse(json) as Record<string, unknown>).createdByHybrisClient, 'demo-enricher', 'the system field wins')

  const only = nodeObject(urls, 'demo', customer, rec('{"createdByHybrisClient":"spoofed"}'))
  t.same(duplicateKeys(only), [])
  t.equal(only,
    `{"id":"c1","consent-reference":"consent-1","created":1700000000000,"createdByHybrisClient":"demo-enricher","tenant":"demo","schema":"${META}/nodes/core/customer"}`,
    'when it was the only custom property the object closes cleanly')

  const nested = nodeObject(urls, 'demo', customer, rec('{"meta":{"createdByHybrisClient":"inner"}}'))
  t.same(JSON.parse(nested).meta, { createdByHybrisClient: 'inner' }, 'a nested field of that name is data and stays')
  const asValue = nodeObject(urls, 'demo', customer, rec('{"note":"createdByHybrisClient"}'))
  t.equal(JSON.parse(asValue).note, 'createdByHybrisClient', 'the name as a value stays')
})

t.test('relationObject: exact JSON', async (t) => {
  const json = relationObject(urls, 'demo', viewed, rec('{"views":3}', 10))
  t.equal(json,
    `{"fid":"c1","tid":"p1","id":"v1","schema":"${META}/relations/core/customer/core/product/core/viewed","fSchema":"${META}/nodes/core/customer","tSchema":"${META}/nodes/core/product","consentReference":"consent-1","created":10,"createdByHybrisClient":"demo-enricher","tenant":"demo","views":3}`)
  t.equal(relationObject(urls, 'demo', viewed, rec('{}', 10)),
    `{"fid":"c1","tid":"p1","id":"v1","schema":"${META}/relations/core/customer/core/product/core/viewed","fSchema":"${META}/nodes/core/customer","tSchema":"${META}/nodes/core/product","consentReference":"consent-1","created":10,"createdByHybrisClient":"demo-enricher","tenant":"demo"}`)
})

t.test('relationObject: a custom createdByHybrisClient does not duplicate the system field', async (t) => {
  const json = relationObject(urls, 'demo', viewed, rec('{"createdByHybrisClient":"x","views":1}', 10))
  t.same(duplicateKeys(json), [])
  t.equal(JSON.parse(json).createdByHybrisClient, 'demo-enricher')
  t.equal(JSON.parse(json).views, 1)
})

t.test('counterResult: the relation object plus the three creation times', async (t) => {
  const relJson = relationObject(urls, 'demo', viewed, rec('{"views":4}', 30))
  const json = counterResult(relJson, rec('{}', 10), rec('{}', 20), rec('{"views":4}', 30))
  t.equal(json,
    `{"fid":"c1","tid":"p1","id":"v1","schema":"${META}/relations/core/customer/core/product/core/viewed","fSchema":"${META}/nodes/core/customer","tSchema":"${META}/nodes/core/product","consentReference":"consent-1","created":30,"createdByHybrisClient":"demo-enricher","tenant":"demo","views":4,"toCreated":20,"fromCreated":10,"relationCreated":30}`)
  const o = JSON.parse(json)
  t.equal(o.views, 4, 'the counter is an integer field named after the counter')
  t.same([o.fromCreated, o.toCreated, o.relationCreated], [10, 20, 30])
  t.same(duplicateKeys(json), [])
})

t.test('relation custom properties named like relation system fields do not duplicate keys',
  async (t) => {
    const json = relationObject(urls, 'demo', viewed, rec('{"fSchema":"http://evil/","tSchema":"x"}', 10))
    t.same(duplicateKeys(json), [])
    t.equal(JSON.parse(json).fSchema, `${META}/nodes/core/customer`)
    const counter = counterResult(relationObject(urls, 'demo', viewed, rec('{"toCreated":1,"views":2}', 30)), rec('{}', 10), rec('{}', 20), rec('{}', 30))
    t.same(duplicateKeys(counter), [])
    t.equal(JSON.parse(counter).toCreated, 20)
  })

t.test('nodeChunk: exact JSON, with and without relations', async (t) => {
  const source = nodeChunk(urls, 'demo', customer, rec('{"name":"Ann"}', 10), rec('{"name":"Ann"}', 10).p, undefined)
  t.equal(source,
    `{"id":"c1","tenant":"demo","schema":"${META}/nodes/core/customer","neighbours_url":"${BASE}/graph/v1/demo/neighbours/core/customer/c1","created":10,"createdByHybrisClient":"demo-enricher","consentReference":"consent-1","locked":false,"properties":{"name":"Ann"}}`)
  t.notOk('relations' in JSON.parse(source), 'the source chunk has no relations field')

  const relChunk = relationChunk(urls, 'demo', viewed, rec('{"views":2}', 30), rec('{"views":2}', 30).p)
  const neighbour = nodeChunk(urls, 'demo', product, rec('{}', 20, 'TENANT'), rec('{}', 20, 'TENANT').p, [relChunk])
  t.equal(neighbour,
    `{"id":"p1","tenant":"demo","schema":"${META}/nodes/core/product","neighbours_url":"${BASE}/graph/v1/demo/neighbours/core/product/p1","created":20,"createdByHybrisClient":"demo-enricher","consentReference":"TENANT","locked":false,"properties":{},"relations":[${relChunk}]}`)
  t.same(JSON.parse(neighbour).properties, {}, 'empty object when there are no properties')
  t.equal(nodeChunk(urls, 'demo', product, rec('{}', 20), rec('{}', 20).p, []).endsWith(',"properties":{},"relations":[]}'), true, 'an empty relations list is kept')
})

t.test('relationChunk: exact JSON', async (t) => {
  t.equal(relationChunk(urls, 'demo', viewed, rec('{"views":2}', 30), rec('{"views":2}', 30).p),
    `{"id":"v1","fid":"c1","tid":"p1","tenant":"demo","schema":"${META}/relations/core/customer/core/product/core/viewed","created":30,"createdByHybrisClient":"demo-enricher","locked":false,"consentReference":"consent-1","properties":{"views":2}}`)
  t.equal(relationChunk(urls, 'demo', viewed, rec('{}', 30), rec('{}', 30).p).endsWith('"properties":{}}'), true)
})

t.test('chunks keep a custom createdByHybrisClient inside properties only', async (t) => {
  const chunk = nodeChunk(urls, 'demo', customer, rec('{"createdByHybrisClient":"custom"}', 10), rec('{"createdByHybrisClient":"custom"}', 10).p, undefined)
  t.same(duplicateKeys(chunk), [])
  const o = JSON.parse(chunk)
  t.equal(o.createdByHybrisClient, 'demo-enricher')
  t.same(o.properties, { createdByHybrisClient: 'custom' })
})

t.test('ids with "/", spaces and other specials are percent-encoded in URLs, kept raw in id fields', async (t) => {
  const odd: NodeRef = { ns: 'my ns', type: 'cu/st', id: 'a/b c?#%✓' }
  const chunk = JSON.parse(nodeChunk(urls, 'my tenant', odd, rec('{}', 1), rec('{}', 1).p, undefined))
  t.equal(chunk.id, 'a/b c?#%✓')
  t.equal(chunk.tenant, 'my tenant')
  t.equal(chunk.schema, `${BASE}/graph/v1/my%20tenant/metamodel/nodes/my%20ns/cu%2Fst`)
  t.equal(chunk.neighbours_url, `${BASE}/graph/v1/my%20tenant/neighbours/my%20ns/cu%2Fst/a%2Fb%20c%3F%23%25%E2%9C%93`)

  const obj = JSON.parse(nodeObject(urls, 'demo', { ns: 'core', type: 'customer', id: 'John Doe/1' }, rec('{}')))
  t.equal(obj.id, 'John Doe/1')
  t.equal(obj.schema, `${META}/nodes/core/customer`, 'the node schema names the type, not the id')

  const rel: RelationRef = {
    from: { ns: 'a b', type: 'c/d', id: 'f/1' }, to: { ns: 'core', type: 'product', id: 't 2' }, rel: { ns: 'r/s', type: 'k n', id: 'x/y z' },
  }
  const relObj = JSON.parse(relationObject(urls, 'demo', rel, rec('{}')))
  t.same([relObj.fid, relObj.tid, relObj.id], ['f/1', 't 2', 'x/y z'])
  t.equal(relObj.schema, `${META}/relations/a%20b/c%2Fd/core/product/r%2Fs/k%20n`)
  t.equal(relObj.fSchema, `${META}/nodes/a%20b/c%2Fd`)
  t.equal(JSON.parse(relationChunk(urls, 'demo', rel, rec('{}'), rec('{}').p)).schema, relObj.schema)
})

t.test('ids that need JSON escaping stay valid JSON', async (t) => {
  const n: NodeRef = { ns: 'core', type: 'customer', id: 'quote " back \\ nl \n' }
  const o = JSON.parse(nodeObject(urls, 'demo', n, rec('{}', 1, 'ref "x"', 'client\\1')))
  t.equal(o.id, n.id)
  t.equal(o['consent-reference'], 'ref "x"')
  t.equal(o.createdByHybrisClient, 'client\\1')
})

t.test('locked chunks keep identity, timestamps and owner, with locked true and empty properties', async (t) => {
  const r = rec('{"secret":"never shown"}', 10)
  const node = JSON.parse(nodeChunk(urls, 'demo', customer, r, undefined, []))
  t.same([node.id, node.created, node.consentReference, node.locked, node.properties, node.relations], ['c1', 10, 'consent-1', true, {}, []])
  const relation = JSON.parse(relationChunk(urls, 'demo', viewed, r, undefined))
  t.same([relation.id, relation.created, relation.consentReference, relation.locked, relation.properties], ['v1', 10, 'consent-1', true, {}])
  t.notMatch(JSON.stringify([node, relation]), /never shown/)
})
