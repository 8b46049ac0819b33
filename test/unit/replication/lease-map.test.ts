import t from 'tap'
import { LeaseMap, parseLease, shardOfLeaseKey } from '../../../src/replication/lease-map'

t.test('a lease is believed for one lease period after it was written', async (t) => {
  let now = 1000
  const map = new LeaseMap(5000, () => now)
  const lease = { node: 'a', url: 'http://a', epoch: 1 }
  map.seen(0, lease)
  t.same(map.owner(0), lease)
  now += 4999
  t.same(map.owner(0), lease, 'still within the period')
  now += 1
  t.equal(map.owner(0), undefined, 'not renewed for a full period: no owner')
  map.seen(0, lease, 4000)
  t.same(map.owner(0), lease, 'a lease seen 4 s old')
  now += 1000
  t.equal(map.owner(0), undefined, 'expires 1 s later')
  map.seen(1, lease)
  map.seen(1, undefined)
  t.equal(map.owner(1), undefined, 'a deleted lease')
  t.equal(map.retryAfterSeconds(), 5)
  t.equal(new LeaseMap(2500).retryAfterSeconds(), 3, 'rounded up')
})

t.test('keys and values of the lease bucket', async (t) => {
  t.equal(shardOfLeaseKey('shard.12'), 12)
  t.equal(shardOfLeaseKey('auth'), undefined)
  t.same(parseLease('{"node":"a","url":"u","epoch":3}'), { node: 'a', url: 'u', epoch: 3 })
  t.equal(parseLease('{"node":"a"}'), undefined)
  t.equal(parseLease('not json'), undefined)
})

t.test('the watch and the poll both report: an older revision changes nothing', async (t) => {
  let now = 1000
  const map = new LeaseMap(3000, () => now)
  const a = { node: 'a', url: 'http://a', epoch: 1 }
  const b = { node: 'b', url: 'http://b', epoch: 2 }
  t.equal(map.revision(0), 0, 'nothing seen yet')
  map.seen(0, b, 0, 12)
  map.seen(0, a, 0, 10) // the watch, late, bringing what the poll had passed
  t.same(map.owner(0), b, 'the newer lease stays')
  t.equal(map.revision(0), 12)
  now += 2000
  map.seen(0, b, 0, 13)
  now += 2000
  t.same(map.owner(0), b, 'a renewal at a newer revision extends the belief')
  map.seen(0, undefined, 0, 14)
  t.equal(map.owner(0), undefined, 'deleted at a newer revision')
  map.seen(0, b, 0, 13)
  t.equal(map.owner(0), undefined, 'a put older than the delete does not bring it back')
})

t.test('a lease being handed over names nobody to send requests to', async (t) => {
  const map = new LeaseMap(3000)
  map.seen(0, { node: 'a', url: 'http://a', epoch: 1 }, 0, 5)
  map.seen(0, { node: 'a', url: 'http://a', epoch: 1, handTo: 'b' }, 0, 6)
  t.equal(map.owner(0), undefined, 'no owner while it moves')
  map.seen(0, { node: 'b', url: 'http://b', epoch: 2 }, 0, 7)
  t.same(map.owner(0), { node: 'b', url: 'http://b', epoch: 2 }, 'the host it went to, once it claimed it')
  t.same(parseLease('{"node":"a","url":"u","epoch":3,"handTo":"b"}'), { node: 'a', url: 'u', epoch: 3, handTo: 'b' })
})
