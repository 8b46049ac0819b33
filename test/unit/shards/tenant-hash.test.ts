import t from 'tap'
import { actorOf, fnv1a, shardOf, shardsOfActor } from '../../../src/shards/tenant-hash'

t.test('fnv1a matches the published FNV-1a 32-bit vectors for ASCII', async (t) => {
  t.equal(fnv1a(''), 0x811c9dc5, 'the offset basis for the empty string')
  t.equal(fnv1a('a'), 0xe40c292c)
  t.equal(fnv1a('foobar'), 0xbf9cf968)
})

t.test('fnv1a is pinned for tenant names (a change would move data between shards)', async (t) => {
  t.equal(fnv1a('demo'), 2935829814)
  t.equal(fnv1a('acme'), 1174237615)
  t.equal(fnv1a('tenant-0'), 1110617592)
  t.equal(fnv1a('日本'), 1610399396, 'hashed over UTF-16 code units')
  t.equal(fnv1a('demo'), fnv1a('demo'), 'deterministic')
})

t.test('fnv1a is an unsigned 32-bit integer', async (t) => {
  for (const s of ['', 'x', 'demo', 'a very long tenant name '.repeat(20), '✓✓✓']) {
    const h = fnv1a(s)
    t.ok(Number.isInteger(h) && h >= 0 && h <= 0xffffffff, `${JSON.stringify(s.slice(0, 10))} -> ${h}`)
  }
})

t.test('shardOf is in range and stable', async (t) => {
  for (const count of [1, 2, 3, 4, 7, 16, 256]) {
    for (let i = 0; i < 200; i++) {
      const s = shardOf(`tenant-${i}`, count)
      if (!(Number.isInteger(s) && s >= 0 && s < count)) t.fail(`shard ${s} out of [0, ${count})`)
    }
  }
  t.equal(shardOf('demo', 4), 2935829814 % 4)
  t.equal(shardOf('acme', 4), 1174237615 % 4)
  t.equal(shardOf('anything', 1), 0, 'one shard takes everything')
})

t.test('16 tenants over 4 shards hit every shard', async (t) => {
  const hits = [0, 0, 0, 0]
  for (let i = 0; i < 16; i++) hits[shardOf(`tenant-${i}`, 4)]!++
  t.same(hits, [4, 4, 4, 4])
})

t.test('1000 tenants spread evenly over 8 shards', async (t) => {
  const hits = new Array<number>(8).fill(0)
  for (let i = 0; i < 1000; i++) hits[shardOf(`tenant-${i}`, 8)]!++
  for (const [shard, n] of hits.entries()) t.ok(n > 90 && n < 160, `shard ${shard} holds ${n} of 1000 (expected about 125)`)
  t.equal(hits.reduce((a, b) => a + b, 0), 1000)
})

t.test('actorOf maps a shard into the worker range', async (t) => {
  t.equal(actorOf(0, 2), 0)
  t.equal(actorOf(5, 2), 1)
  t.equal(actorOf(7, 4), 3)
  t.equal(actorOf(3, 1), 0)
})

t.test('shardsOfActor partitions every shard exactly once', async (t) => {
  for (const shardCount of [1, 4, 7, 16]) {
    for (const workerCount of [1, 2, 3, 4, 5, 8]) {
      const seen = new Map<number, number>()
      for (let actor = 0; actor < workerCount; actor++) {
        for (const s of shardsOfActor(actor, workerCount, shardCount)) {
          t.equal(actorOf(s, workerCount), actor, `shard ${s} belongs to actor ${actor}`)
          seen.set(s, (seen.get(s) ?? 0) + 1)
        }
      }
      t.same([...seen.keys()].sort((a, b) => a - b), Array.from({ length: shardCount }, (_, i) => i),
        `${shardCount} shards over ${workerCount} workers: every shard owned`)
      t.ok([...seen.values()].every((n) => n === 1), 'and owned once')
    }
  }
})

t.test('shardsOfActor: examples and balance', async (t) => {
  t.same(shardsOfActor(0, 2, 4), [0, 2])
  t.same(shardsOfActor(1, 2, 4), [1, 3])
  t.same(shardsOfActor(2, 3, 7), [2, 5])
  t.same(shardsOfActor(3, 8, 4), [3])
  t.same(shardsOfActor(5, 8, 4), [], 'more workers than shards leaves some idle')
  const sizes = [0, 1, 2].map((a) => shardsOfActor(a, 3, 16).length)
  t.same(sizes, [6, 5, 5], 'no actor owns more than one shard above another')
})
