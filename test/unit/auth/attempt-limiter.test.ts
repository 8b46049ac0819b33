// The attempt limiter on the one clock: tokens per source and per account,
// given back on success, 429 with Retry-After when a bucket is empty.
import t from 'tap'
import { AttemptLimiter } from '../../../src/auth/helpers/attempt-limiter'
import { useClock } from '../../../src/core/clock'
import { ApiError } from '../../../src/core/errors'
import { AddressSet } from '../../../src/net/addresses'
import { clientSource } from '../../../src/net/client-source'

let time = 1_000_000
const restore = useClock({ now: () => time })
t.teardown(restore)

const settings = { source: { capacity: 5, refillMs: 2000 }, account: { capacity: 3, refillMs: 30_000 }, maxKeys: 100 }

function refused(t: tap.Test, fn: () => unknown, message: RegExp, retryAfter: string): void {
  const err = t.throws(fn) as ApiError
  t.ok(err instanceof ApiError)
  t.equal(err.status, 429)
  t.equal(err.type, 'too_many_requests')
  t.match(err.message, message)
  t.equal(err.headers['retry-after'], retryAfter)
}

t.test('failures use up the account bucket; it refills with time', async (t) => {
  const limiter = new AttemptLimiter(settings)
  for (let i = 0; i < 3; i++) limiter.admit('1.1.1.1', 'user:a', true).end(true)
  refused(t, () => limiter.admit('2.2.2.2', 'user:a', true), /for this account/, '30')
  const err = t.throws(() => limiter.admit('3.3.3.3', 'user:a', true)) as ApiError
  t.same(err.oauth, { error: 'temporarily_unavailable', error_description: err.message }, 'OAuth fields at /token')
  t.equal((t.throws(() => limiter.admit('3.3.3.3', 'user:a', false)) as ApiError).oauth, undefined, 'none on the sign-in form')
  time += 29_000
  refused(t, () => limiter.admit('1.1.1.1', 'user:a', true), /for this account/, '1')
  time += 1000
  t.doesNotThrow(() => limiter.admit('1.1.1.1', 'user:a', true).end(true), 'a token came back after 30 s')
})

t.test('successes give their tokens back; checks still running hold theirs', async (t) => {
  const limiter = new AttemptLimiter(settings)
  for (let i = 0; i < 10; i++) limiter.admit('4.4.4.4', 'user:b', true).end(false)
  const running = [1, 2, 3].map(() => limiter.admit('4.4.4.4', 'user:c', true))
  refused(t, () => limiter.admit('4.4.4.4', 'user:c', true), /for this account/, '30')
  running.forEach((a) => a.end(false))
  running[0]!.end(true)
  t.doesNotThrow(() => limiter.admit('4.4.4.4', 'user:c', true), 'ending twice changes nothing; tokens came back')
})

t.test('the source bucket spans accounts (password spraying)', async (t) => {
  const limiter = new AttemptLimiter(settings)
  for (let i = 0; i < 5; i++) limiter.admit('5.5.5.5', `name:spray-${i}`, true).end(true)
  refused(t, () => limiter.admit('5.5.5.5', 'name:spray-9', true), /from this address/, '2')
  t.doesNotThrow(() => limiter.admit('6.6.6.6', 'name:spray-9', true), 'another address is not limited')
  time += 2000
  t.doesNotThrow(() => limiter.admit('5.5.5.5', 'name:spray-9', true), 'one token back after 2 s')
})

t.test('many keys are bounded', async (t) => {
  const limiter = new AttemptLimiter({ ...settings, maxKeys: 10 })
  for (let i = 0; i < 1000; i++) limiter.admit(`10.0.${i >> 8}.${i & 255}`, `name:k${i}`, true).end(true)
  t.pass('a thousand sources and accounts, no growth past the bound (no throw)')
})

t.test('the source: the peer, or behind trusted proxies the right-most untrusted X-Forwarded-For hop', async (t) => {
  const none = new AddressSet([])
  const proxies = new AddressSet(['10.0.0.0/8', '127.0.0.1'])
  t.equal(clientSource('203.0.113.5', '198.51.100.1', none), '203.0.113.5', 'no trusted proxy: X-Forwarded-For is ignored')
  t.equal(clientSource('::ffff:203.0.113.5', '', none), '203.0.113.5', 'a mapped peer is its IPv4 address')
  t.equal(clientSource('203.0.113.5', '198.51.100.1', proxies), '203.0.113.5', 'a peer that is no trusted proxy')
  t.equal(clientSource('10.0.0.2', '198.51.100.1', proxies), '198.51.100.1')
  t.equal(clientSource('10.0.0.2', 'forged, 198.51.100.1, 10.0.0.9', proxies), '198.51.100.1', 'trusted hops are skipped, forged ones on the left ignored')
  t.equal(clientSource('127.0.0.1', '10.0.0.3, 10.0.0.9', proxies), '10.0.0.3', 'all hops trusted: the left-most')
  t.equal(clientSource('127.0.0.1', '', proxies), '127.0.0.1', 'no header: the peer')
  t.equal(clientSource('10.0.0.2', '2001:DB8:0:7::1', proxies), '2001:db8:0:7::/64', 'IPv6 in one spelling, by its /64')
  t.equal(clientSource('2001:db8:0:7:aaaa::1', '', none), clientSource('2001:db8:0:7:bbbb::2', '', none), 'one /64 is one source')
  t.not(clientSource('2001:db8:0:7::1', '', none), clientSource('2001:db8:0:8::1', '', none))
})
