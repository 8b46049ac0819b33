// Reads on every core over HTTP (docs/design/architecture.md, "Reads on every
// core"): with three actor threads, reads of one tenant run on any of them,
// yet a read sent after a write's 2xx sees the write, and no read sent after
// a revocation's 204 shows the revoked data, whichever thread answers it.
import t from 'tap'
import { Graph, call, createConsent, enc, pool } from '../helpers/client'
import { serverForFile } from '../helpers/server'
import { sleep } from '../../bench/wait'

const fixture = serverForFile(t, { args: ['--workers', '3'] })

t.test('read-your-writes: every read sent after a write is answered sees it, on whatever thread', async (t) => {
  const g = fixture.graph
  const stale: string[] = []
  for (let i = 0; i < 120; i++) {
    t.equal((await g.put('nodes/core/customer/ryw', { n: i })).status, 204)
    t.equal((await g.put(`relations/core/customer/ryw/core/product/p${i}/core/viewed/v${i}`, { i })).status, 204)
    const [node, prop, around] = await Promise.all([g.get('nodes/core/customer/ryw'), g.get('nodes/core/customer/ryw/n'), g.get('neighbours/core/customer/ryw')])
    if (node.json<{ n: number }>().n !== i) stale.push(`node ${i}: ${node.text}`)
    if (prop.json<number>() !== i) stale.push(`property ${i}: ${prop.text}`)
    const chunks = around.json<{ id: string; properties: Record<string, unknown> }[]>()
    if (chunks[0]!.properties.n !== i || !chunks.some((c) => c.id === `p${i}`)) stale.push(`neighbours ${i}: ${around.text.slice(0, 300)}`)
  }
  t.same(stale.slice(0, 3), [], 'no read missed a write acknowledged before it was sent')
})

t.test('revocation raced by reads on every thread: no plaintext in a read sent after the 204', async (t) => {
  const { url } = fixture.server
  const token = fixture.token
  for (let round = 0; round < 5; round++) {
    const ref = await createConsent(url, 'demo', token, `racer-${round}`)
    const g = new Graph(url, 'demo', token, ref)
    const secret = `plain-${round}-`
    for (let i = 0; i < 8; i++) {
      t.equal((await g.put(`nodes/core/customer/race${round}-${i}`, { name: `${secret}${i}` })).status, 204)
      t.equal((await g.put(`relations/core/customer/race${round}-0/core/customer/race${round}-${i}/core/knows/k${round}-${i}`, { note: `${secret}rel${i}` })).status, 204)
    }
    const reads = [
      (n: number) => g.get(`nodes/core/customer/race${round}-${n % 8}`),
      (n: number) => g.get(`nodes/core/customer/race${round}-${n % 8}/name`),
      () => g.get(`neighbours/core/customer/race${round}-0`),
    ]
    let revoked = false
    let stop = false
    let plainBefore = 0
    const leaks: string[] = []
    const readers = Array.from({ length: 12 }, async (_, r) => {
      for (let n = r; !stop; n++) {
        const sentAfterRevocation = revoked
        const res = await reads[n % reads.length]!(n)
        if (!res.text.includes(secret)) continue
        if (sentAfterRevocation) leaks.push(`${res.status} ${res.text.slice(0, 120)}`)
        else plainBefore++
      }
    })
    await sleep(50)
    const res = await call('DELETE', `${url}/graph/v1/demo/consents/${enc(ref)}`, { authorization: `Bearer ${token}` })
    t.equal(res.status, 204, 'revoked')
    revoked = true
    await sleep(150)
    stop = true
    await Promise.all(readers)
    t.ok(plainBefore > 0, `round ${round}: reads saw the data before the revocation`)
    t.same(leaks, [], `round ${round}: no read sent after the 204 showed revoked data`)
  }
})

t.test('neighbours served from warm chunk caches on every thread: each change shows at once in every read after its answer', async (t) => {
  const { url } = fixture.server
  const token = fixture.token
  const ref = await createConsent(url, 'demo', token, 'chunk-cache')
  const g = new Graph(url, 'demo', token, ref)
  const consent = (suffix: string): string => `${url}/graph/v1/demo/consents/${enc(ref)}${suffix}`
  const auth = { authorization: `Bearer ${token}` }
  t.equal((await g.put('nodes/core/customer/warm', { name: 'First Name', email: 'warm@x.y' })).status, 204)
  t.equal((await g.put('relations/core/customer/warm/core/product/pw/core/viewed/vw', { views: 1 })).status, 204)
  /** 24 reads at once (spread over the three threads); the bodies that `bad` finds wrong. */
  const wrong = async (bad: (text: string) => boolean): Promise<string[]> => {
    const texts = await Promise.all(Array.from({ length: 24 }, async () => (await g.get('neighbours/core/customer/warm')).text))
    return texts.filter(bad).map((text) => text.slice(0, 200))
  }
  t.same(await wrong((x) => !x.includes('First Name')), [], 'warm: every thread has rendered it')
  t.equal((await g.put('nodes/core/customer/warm', { name: 'Second Name' })).status, 204)
  t.same(await wrong((x) => !x.includes('Second Name') || x.includes('First Name')), [], 'a write: no thread serves the old chunk')
  t.equal((await call('PUT', consent('/revokedProperties'), { ...auth, 'content-type': 'application/json' }, '["name","views"]')).status, 204)
  t.same(await wrong((x) => x.includes('Second Name') || x.includes('"views"') || !x.includes('warm@x.y')), [], 'revoked properties: left out by every thread, the others kept')
  t.equal((await call('PUT', consent('/revokedProperties'), { ...auth, 'content-type': 'application/json' }, '[]')).status, 204)
  t.same(await wrong((x) => !x.includes('Second Name')), [], 'given back: shown again')
  t.equal((await call('DELETE', consent(''), auth)).status, 204)
  t.same(await wrong((x) => x.includes('Second Name') || x.includes('warm@x.y') || x.includes('"views"')), [], 'revoked: no plaintext on any thread')
  t.equal((await call('POST', consent('/grant'), auth)).status, 204)
  t.same(await wrong((x) => x.includes('Second Name') || x.includes('warm@x.y') || !x.includes('"locked":true')), [], 'granted again: the old data stays locked on every thread')
})

t.test('kept whole neighbourhoods on every thread: a change to a neighbour or a relation shows in every read after its answer', async (t) => {
  const g = fixture.graph
  t.equal((await g.put('nodes/core/customer/kept', { name: 'Kept' })).status, 204)
  t.equal((await g.put('relations/core/customer/kept/core/product/pk/core/viewed/vk', { views: 1 })).status, 204)
  t.equal((await g.put('nodes/core/product/pk', { title: 'Old Title' })).status, 204)
  const wrong = async (bad: (text: string) => boolean): Promise<string[]> => {
    const texts = await Promise.all(Array.from({ length: 24 }, async () => (await g.get('neighbours/core/customer/kept')).text))
    return texts.filter(bad).map((text) => text.slice(0, 200))
  }
  for (let round = 0; round < 3; round++) t.same(await wrong((x) => !x.includes('Old Title')), [], `warm ${round}: kept on every thread`)
  t.equal((await g.put('nodes/core/product/pk', { title: 'New Title' })).status, 204)
  t.same(await wrong((x) => !x.includes('New Title') || x.includes('Old Title')), [], 'the neighbour changed: no thread serves the kept neighbourhood')
  for (let round = 0; round < 3; round++) await wrong(() => false)
  t.equal((await g.put('relations/core/customer/kept/core/product/pk/core/viewed/vk', { views: 2 })).status, 204)
  t.same(await wrong((x) => !x.includes('"views":2')), [], 'the relation changed')
  t.equal((await g.put('relations/core/customer/kept/core/product/pk2/core/viewed/vk2', { views: 7 })).status, 204)
  t.same(await wrong((x) => !x.includes('"views":7')), [], 'a relation added')
  t.equal((await g.delete('nodes/core/product/pk2')).status, 204)
  t.same(await wrong((x) => x.includes('"views":7') || x.includes('pk2')), [], 'a neighbour deleted')
  const ndjson = await call('GET', `${fixture.server.url}/graph/v1/demo/neighbours/core/customer/kept`, { authorization: `Bearer ${fixture.token}`, accept: 'application/x-ndjson' })
  t.equal(ndjson.headers['content-type'], 'application/x-ndjson', 'the JSON answer kept is not served for another format')
  t.equal(ndjson.text.trim().split('\n').length, 2, 'one line per chunk')
  t.same(ndjson.text.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id), ['kept', 'pk'])
})

t.test('a neighbourhood sent in several slices, kept on the front thread: whole, and a change shows in every read after its answer', async (t) => {
  const g = fixture.graph
  const N = 600
  t.equal((await g.put('nodes/core/customer/hub', { name: 'Hub' })).status, 204)
  await pool(N, 32, async (i) => {
    const res = await g.put(`relations/core/customer/hub/core/product/hp${i}/core/viewed/hv${i}`, { views: i })
    if (res.status !== 204) throw new Error(`PUT ${i}: ${res.status}`)
  })
  t.equal((await g.put('nodes/core/product/hp7', { title: 'Old Title' })).status, 204)
  const reads = async (): Promise<string[]> => Promise.all(Array.from({ length: 24 }, async () => (await g.get('neighbours/core/customer/hub')).text))
  let first = ''
  for (let round = 0; round < 3; round++) {
    const texts = await reads()
    first ||= texts[0]!
    t.equal(new Set(texts).size, 1, `warm ${round}: every read the same answer`)
  }
  const chunks = JSON.parse(first) as { id: string }[]
  t.equal(chunks.length, N + 1, 'the source and every neighbour, whole')
  t.ok(first.length > 64 * 1024, `more than one slice (${first.length} bytes)`)
  t.equal((await g.put('nodes/core/product/hp7', { title: 'New Title' })).status, 204)
  const after = await reads()
  t.same(after.filter((x) => !x.includes('New Title') || x.includes('Old Title')).map((x) => x.slice(0, 200)), [], 'the neighbour changed: nothing kept is served')
  t.equal((await g.put('relations/core/customer/hub/core/product/hp600/core/viewed/hv600', { views: 600 })).status, 204)
  for (let round = 0; round < 2; round++) await reads()
  t.same((await reads()).filter((x) => (JSON.parse(x) as unknown[]).length !== N + 2), [], 'a relation added shows, once kept again too')
})

t.test('kept get-node and get-relation answers on every thread: each change shows in every read after its answer', async (t) => {
  const g = fixture.graph
  const { url } = fixture.server
  const auth = { authorization: `Bearer ${fixture.token}` }
  const consent = (suffix: string): string => `${url}/graph/v1/demo/consents/${enc(g.consent)}${suffix}`
  const node = 'nodes/core/customer/single'
  const relation = 'relations/core/customer/single/core/product/ps/core/viewed/vs'
  t.equal((await g.put(node, { name: 'Kept Name', email: 'kept@x.y' })).status, 204)
  t.equal((await g.put(relation, { views: 1 })).status, 204)
  /** 24 reads of each at once (spread over the three threads); the bodies that `bad` finds wrong. */
  const wrong = async (bad: (node: string, relation: string) => boolean): Promise<string[]> => {
    const pairs = await Promise.all(Array.from({ length: 24 }, async () => [(await g.get(node)).text, (await g.get(relation)).text] as const))
    return pairs.filter(([n, r]) => bad(n, r)).map(([n, r]) => `${n.slice(0, 120)} | ${r.slice(0, 120)}`)
  }
  for (let round = 0; round < 3; round++) t.same(await wrong((n, r) => !n.includes('Kept Name') || !r.includes('"views":1')), [], `warm ${round}: kept on every thread`)
  t.equal((await g.put(node, { name: 'New Name' })).status, 204)
  t.same(await wrong((n) => !n.includes('New Name') || n.includes('Kept Name')), [], 'the node changed: no thread serves the kept answer')
  t.equal((await g.put(relation, { views: 2 })).status, 204)
  t.same(await wrong((_n, r) => !r.includes('"views":2')), [], 'the relation changed')
  for (let round = 0; round < 3; round++) await wrong(() => false)
  t.equal((await call('PUT', consent('/revokedProperties'), { ...auth, 'content-type': 'application/json' }, '["name"]')).status, 204)
  t.same(await wrong((n) => n.includes('New Name') || !n.includes('kept@x.y')), [], 'a revoked property: left out by every thread')
  t.equal((await call('PUT', consent('/revokedProperties'), { ...auth, 'content-type': 'application/json' }, '[]')).status, 204)
  t.same(await wrong((n) => !n.includes('New Name')), [], 'given back: shown again')
  t.equal((await g.delete(node)).status, 204)
  t.same(await wrong((n) => !n.includes('element_not_found')), [], 'deleted: 404 on every thread')
})

t.test('a kept answer is written byte for byte as the first one: text beyond ASCII, its length and its headers', async (t) => {
  const g = fixture.graph
  const node = 'nodes/core/customer/unicode-kept'
  t.equal((await g.put(node, { name: 'Zoë Ångström 名前 🚀 a\u2028b' })).status, 204)
  const first = await g.get(node)
  t.equal(first.status, 200)
  // Asked again and again: kept on the front thread after the second ask, then served from there.
  const later = []
  for (let i = 0; i < 12; i++) later.push(await g.get(node))
  for (const res of later) {
    t.equal(res.status, 200)
    t.equal(res.text, first.text)
    t.equal(res.headers['content-type'], 'application/json')
    t.equal(res.headers['content-length'], String(Buffer.byteLength(first.text)))
  }
  t.equal((JSON.parse(later[11]!.text) as { name: string }).name, 'Zoë Ångström 名前 🚀 a\u2028b')
})
