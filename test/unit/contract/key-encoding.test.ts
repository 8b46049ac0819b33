// Property tests of the key encoding and of every key builder, in-process
// against a real LMDB environment: strings of every length up to each
// documented limit, built from NUL and the other escaped characters,
// markers, '%', '/', 1- to 4-byte UTF-8 and lone surrogates, keep their
// content, their order and their prefix ranges, and fit LMDB's key size.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open, type Database, type RootDatabase } from 'lmdb'
import { toBufferKey } from 'ordered-binary'
import { MAX_ID_BYTES, MAX_NAME_BYTES, MAX_PROPERTY_BYTES } from '../../../src/graph/validate'
import type { NodeRef, RelationRef } from '../../../src/contract/messages'
import { decodeKey, encodeKey, KEY_OPTIONS, keyPartBytes, MAX_KEY_BYTES, type StoreKey } from '../../../src/contract/key-encoding'
import {
  adjacencyKey, adjacencyPrefix, consentKey, END, eventKey, IN, indexKey, indexPrefix, nodeKey, OUT, prefixRange, relationKey,
  keyParts, relationOfAdjacency, scheduleIdKey, scheduleKey, tenantSlotKey, typePrefix, webhookKey, type Key,
} from '../../../workers/store/keys'
import { compareKeys, neighbourOf, pick, randomString, seeded, startsWith, stringOfBytes, type ModelKey } from '../../helpers/key-strings'

/** A term of the blind index: base64url of a SHA-256. */
const TERM = 'x'.repeat(43)

function tempDb(t: { teardown(fn: () => Promise<void>): void }): { env: RootDatabase; db: Database<number, Key> } {
  const dir = mkdtempSync(join(tmpdir(), 'key-encoding-test-'))
  const env = open({ path: dir })
  t.teardown(async () => {
    await env.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { env, db: env.openDB<number, Key>('keys', KEY_OPTIONS) }
}

const sign = (n: number): number => Math.sign(n)

/** How many bytes a string element takes: its measure, plus the marker before a first character below 28. */
const elementBytes = (s: string): number => keyPartBytes(s) + (s.charCodeAt(0) >= 28 ? 0 : 1)

t.test('every string up to 2000 bytes keeps its content and takes the bytes its measure says', async (t) => {
  const rnd = seeded(1)
  let checked = 0
  for (let bytes = 0; bytes <= 2000; bytes++) {
    for (let i = 0; i < 3; i++) {
      const s = bytes === 0 ? '' : stringOfBytes(rnd, bytes)
      if (keyPartBytes(s) !== bytes) t.fail(`measure of a ${bytes}-byte string`)
      if (encodeKey(s).length !== elementBytes(s)) t.fail(`${bytes}: ${JSON.stringify(s)} takes ${encodeKey(s).length} bytes`)
      if (bytes < MAX_KEY_BYTES && decodeKey(encodeKey(s)) !== s) t.fail(`${bytes}: ${JSON.stringify(s)} read back differently`)
      const inArray = [s, 'after', 7]
      if (bytes < 1000) t.same(decodeKey(encodeKey(inArray)), inArray) || t.fail(`${bytes}: in an array`)
      checked++
    }
  }
  t.ok(checked > 6000)
  // The bug this replaces: a long string holding NUL read back as several elements.
  const long = 'a\u0000b'.repeat(40)
  t.same(decodeKey(encodeKey(['t', long])), ['t', long])
  t.same(decodeKey(encodeKey(['t', `${'u'.repeat(25)}\u0000${'h'.repeat(43)}`])), ['t', `${'u'.repeat(25)}\u0000${'h'.repeat(43)}`])
})

t.test('plain strings keep the bytes of the default encoding, so stored data needs no migration', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'key-encoding-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const rnd = seeded(2)
  const atoms = ['a', '%', '/', '-', 'é', '中', '😀', '\u001c', ' ', '\u007f']
  const keys: (string | Key)[] = []
  for (let n = 0; n < 300; n++) keys.push([randomString(rnd, 1 + n, atoms), n, randomString(rnd, 400, atoms)], randomString(rnd, 1 + 2 * n, atoms))
  for (const key of keys) t.same(encodeKey(key), toBufferKey(key)) || t.fail(`bytes of ${JSON.stringify(key)}`)

  const before = open({ path: dir })
  const plain = before.openDB<number, string | Key>('d', {})
  await plain.transaction(() => keys.forEach((k, i) => plain.putSync(k, i)))
  const order = [...plain.getKeys()]
  await before.close()
  const after = open({ path: dir })
  const ours = after.openDB<number, string | Key>('d', KEY_OPTIONS)
  t.same([...ours.getKeys()], order, 'the same keys, in the same order')
  t.ok(keys.every((k, i) => ours.get(k) === i), 'each found under the new encoding')
  await after.close()
})

t.test('keys sort element by element in code point order', async (t) => {
  const rnd = seeded(3)
  const failures: string[] = []
  for (let n = 0; n < 20_000; n++) {
    const a: ModelKey = [randomString(rnd, 1 + Math.floor(rnd() * 120)), randomString(rnd, Math.floor(rnd() * 8))]
    if (rnd() < 0.5) a.pop()
    const b: ModelKey = a.map((x) => (rnd() < 0.5 ? neighbourOf(rnd, String(x)) : x))
    if (rnd() < 0.3) b.push(pick(rnd, ['', '\u0000', 'a']))
    const got = sign(Buffer.compare(encodeKey(a), encodeKey(b)))
    const want = compareKeys(a, b)
    if (got !== want && failures.length < 5) failures.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: ${got}, want ${want}`)
  }
  t.same(failures, [])
})

/** A pool of names that differ from each other only where encodings go wrong. */
function trickyNames(rnd: () => number, max: number): string[] {
  const base = randomString(rnd, Math.min(max - 4, 20))
  const long = stringOfBytes(rnd, max - 2)
  return [...new Set([
    base, `${base}\u0000`, `${base}\u0000x`, `${base}\u0001`, `${base}/`, `${base}%2F`, `${base}%00`, `${base}\u0004`, `${base}\u0005`,
    long, `${long}\u0000`, `${long.slice(0, -2)}\u0000`, `${long.slice(0, 60)}\u0000${long.slice(61)}`, `\u0000${long.slice(2)}`,
    '\ud800', '\udc00', '😀', 'z',
  ].filter((s) => s !== '' && keyPartBytes(s) <= max))]
}

t.test('prefix ranges in LMDB hold exactly the keys with that prefix, in order', async (t) => {
  const { db } = tempDb(t)
  const rnd = seeded(4)
  const tenants = trickyNames(rnd, MAX_NAME_BYTES).slice(0, 6)
  const names = trickyNames(rnd, MAX_NAME_BYTES)
  const ids = trickyNames(rnd, MAX_ID_BYTES)
  const nodes: NodeRef[] = []
  for (let n = 0; n < 60; n++) nodes.push({ ns: pick(rnd, names), type: pick(rnd, names), id: pick(rnd, ids) })
  const written: ModelKey[] = []
  const put = (k: Key): void => {
    db.putSync(k, 1)
    written.push(k)
  }
  for (let n = 0; n < 400; n++) {
    const tenant = pick(rnd, tenants)
    const owner = pick(rnd, nodes)
    put(nodeKey(tenant, owner))
    put(adjacencyKey(tenant, owner, pick(rnd, nodes), rnd() < 0.5 ? OUT : IN, { ns: pick(rnd, names), type: pick(rnd, names), id: pick(rnd, ids) }))
    put(indexKey(tenant, owner.ns, owner.type, pick(rnd, names), TERM, owner.id))
  }
  const unique = [...new Map(written.map((k) => [JSON.stringify(k), k])).values()].sort(compareKeys)
  t.same([...db.getKeys()], unique, 'the whole database in model order')

  const prefixes: Key[] = []
  for (const n of nodes) {
    for (const tenant of tenants.slice(0, 2)) prefixes.push(typePrefix(tenant, n.ns, n.type), adjacencyPrefix(tenant, n), indexPrefix(tenant, n.ns, n.type, n.ns, TERM))
  }
  prefixes.push([tenants[0]!], [tenants[1]!, names[0]!])
  let nonEmpty = 0
  for (const prefix of prefixes) {
    const got = [...db.getKeys(prefixRange(prefix))]
    const want = unique.filter((k) => startsWith(k, prefix))
    if (want.length > 0) nonEmpty++
    t.same(got, want, `range of ${JSON.stringify(prefix).slice(0, 120)}`)
  }
  t.ok(nonEmpty > 20, 'the ranges were not all empty')
})

/** Worst cases at a limit: the encoded size is largest for NUL (two bytes) and a first character below 28 (a marker). */
const fill = (s: string, bytes: number): string => s + 'a'.repeat(bytes - keyPartBytes(s))
const worstStrings = (bytes: number): string[] => [
  '\u0000'.repeat(bytes / 2), fill(`\u001b${'😀'.repeat(Math.floor((bytes - 1) / 4))}`, bytes), fill('中'.repeat(Math.floor(bytes / 3)), bytes),
  '%'.repeat(bytes), '/'.repeat(bytes), fill(`\u0001${'\ud800'.repeat(Math.floor((bytes - 2) / 3))}`, bytes),
]

function nodeAt(ns: string, type: string, id: string): NodeRef {
  return { ns, type, id }
}

t.test('every key builder fits LMDB with every part at its limit, and reads back', async (t) => {
  const { db } = tempDb(t)
  let longest = 0
  for (const name of worstStrings(MAX_NAME_BYTES)) {
    for (const id of worstStrings(MAX_ID_BYTES)) {
      for (const prop of worstStrings(MAX_PROPERTY_BYTES)) {
        const tenant = name
        const n = nodeAt(name, name, id)
        const rel: RelationRef = { from: n, to: nodeAt(name, name, `${id.slice(0, -1)}b`), rel: nodeAt(name, name, id) }
        // The longest scheduleId (timings.ts): a decay of a relation property.
        const scheduleId = `decay/relations/${[rel.from.ns, rel.from.type, rel.from.id, rel.to.ns, rel.to.type, rel.to.id, rel.rel.ns, rel.rel.type, prop, rel.rel.id].join('/')}`
        const keys: [string, Key][] = [
          ['node', nodeKey(tenant, n)], ['relation', relationKey(tenant, rel)],
          ['adjacency', adjacencyKey(tenant, rel.from, rel.to, OUT, rel.rel)], ['index', indexKey(tenant, name, name, prop, TERM, id)],
          ['event', eventKey(tenant, Number.MAX_SAFE_INTEGER)], ['consent', consentKey(tenant, id)], ['tenant slot', tenantSlotKey(tenant)],
          ['schedule', scheduleKey(8.64e15, tenant, scheduleId)], ['schedule id', scheduleIdKey(tenant, scheduleId)], ['webhook', webhookKey(tenant, id)],
        ]
        for (const [what, key] of keys) {
          const size = encodeKey(key).length
          longest = Math.max(longest, size)
          if (size > MAX_KEY_BYTES) t.fail(`${what} key takes ${size} bytes`)
          db.putSync(key, size)
          if (db.get(key) !== size) t.fail(`${what} key not stored`)
          if (JSON.stringify(keyParts(decodeKey(encodeKey(key)))) !== JSON.stringify(key)) t.fail(`${what} key read back differently`)
        }
        const back = relationOfAdjacency(decodeKey(encodeKey(adjacencyKey(tenant, rel.to, rel.from, IN, rel.rel))) as Key)
        t.same(back.relation, rel) || t.fail('adjacency decodes to its relation')
      }
    }
  }
  t.ok(longest <= MAX_KEY_BYTES, `the longest key at the limits takes ${longest} bytes`)
})

t.test('relations and their adjacency with ids of every length up to the limit', async (t) => {
  const { db: adjacency, env } = tempDb(t)
  const relations = env.openDB<number, Key>('relations', KEY_OPTIONS)
  const rnd = seeded(5)
  for (let bytes = 1; bytes <= MAX_ID_BYTES; bytes++) {
    const tenant = stringOfBytes(rnd, MAX_NAME_BYTES)
    const part = (): string => stringOfBytes(rnd, MAX_NAME_BYTES)
    const rel: RelationRef = {
      from: { ns: part(), type: part(), id: stringOfBytes(rnd, bytes) },
      to: { ns: part(), type: part(), id: stringOfBytes(rnd, bytes) },
      rel: { ns: part(), type: part(), id: stringOfBytes(rnd, bytes) },
    }
    const out = adjacencyKey(tenant, rel.from, rel.to, OUT, rel.rel)
    relations.putSync(relationKey(tenant, rel), bytes)
    adjacency.putSync(out, bytes)
    const listed = [...adjacency.getKeys(prefixRange(adjacencyPrefix(tenant, rel.from)))] as Key[]
    if (listed.length !== 1) t.fail(`${bytes}: the adjacency list holds ${listed.length} entries`)
    else if (JSON.stringify(relationOfAdjacency(listed[0]!).relation) !== JSON.stringify(rel)) t.fail(`${bytes}: the relation read back differently`)
    if (relations.get(relationKey(tenant, rel)) !== bytes) t.fail(`${bytes}: relation not found`)
  }
  t.pass('checked every id length')
})

t.test('range ends and numbers keep the default encoding', async (t) => {
  t.same(encodeKey([END]), Buffer.from([0xff]))
  t.same([...encodeKey(['a', 1])], [0x61, 0, ...encodeKey([1])])
  const decoded: StoreKey = decodeKey(encodeKey([1.5, 'x', 0]))
  t.same(decoded, [1.5, 'x', 0])
})

t.test('tenants, types and property names of every length up to their limits: type and index ranges', async (t) => {
  const { db: nodes, env } = tempDb(t)
  const index = env.openDB<number, Key>('index', KEY_OPTIONS)
  const rnd = seeded(6)
  let checked = 0
  for (let bytes = 1; bytes <= MAX_PROPERTY_BYTES; bytes++) {
    const name = stringOfBytes(rnd, Math.min(bytes, MAX_NAME_BYTES))
    const tenant = stringOfBytes(rnd, Math.min(bytes, MAX_NAME_BYTES))
    const property = stringOfBytes(rnd, bytes)
    // Each one beside its NUL extension, which a prefix range must not take in.
    for (const [ns, type] of [[name, name], [name, `${name}\u0000`], [`${name}\u0000`, name]] as const) {
      if (keyPartBytes(ns) > MAX_NAME_BYTES || keyPartBytes(type) > MAX_NAME_BYTES) continue
      for (const id of ['a', `${property}/%\u0000`]) {
        nodes.putSync(nodeKey(tenant, { ns, type, id }), 1)
        for (const p of [property, `${property}\u0000`]) if (keyPartBytes(p) <= MAX_PROPERTY_BYTES) index.putSync(indexKey(tenant, ns, type, p, TERM, id), 1)
      }
    }
    const ofType = [...nodes.getKeys(prefixRange(typePrefix(tenant, name, name)))] as Key[]
    if (ofType.length !== 2 || ofType.some((k) => k[1] !== name || k[2] !== name)) t.fail(`${bytes}: the type range holds ${JSON.stringify(ofType).slice(0, 200)}`)
    const ofTerm = [...index.getKeys(prefixRange(indexPrefix(tenant, name, name, property, TERM)))] as Key[]
    if (ofTerm.length !== 2 || ofTerm.some((k) => k[3] !== property)) t.fail(`${bytes}: the index range holds ${ofTerm.length} entries`)
    checked++
  }
  t.equal(checked, MAX_PROPERTY_BYTES)
})
