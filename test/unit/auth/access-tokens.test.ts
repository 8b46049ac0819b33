// Access tokens with an injected clock: valid until the TTL, refused after,
// refused once revoked, swept when expired; only the hash is stored.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AccessTokens } from '../../../src/auth/models/access-tokens'
import { openAuthStore, type AuthStore } from '../../../src/auth/models/auth-store'
import { randomToken, sha256, tokenKey } from '../../../src/auth/helpers/secrets'
import { useClock } from '../../../src/core/clock'

/** An auth store in a temporary directory and a clock the test moves; both undone at teardown. */
function fixture(t: { teardown(fn: () => Promise<void>): void }, start: number): { dir: string; store: AuthStore; time: number } {
  const dir = mkdtempSync(join(tmpdir(), 'tokens-test-'))
  const f = { dir, store: openAuthStore(dir), time: start }
  const restore = useClock({ now: () => f.time })
  t.teardown(async () => {
    restore()
    await f.store.env.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return f
}

t.test('expiry, revocation and sweep follow the injected clock', async (t) => {
  const f = fixture(t, 1_000_000)
  const store = f.store
  const tokens = new AccessTokens(store, 3600)
  const { token, record } = await tokens.issue({ client: 'c', tenant: 'demo', scopes: ['s'], sub: undefined })
  t.equal(record.exp, f.time + 3600 * 1000)
  t.equal(store.accessTokens.get(token), undefined, 'the raw token is not a key')
  t.equal(store.accessTokens.get(sha256(token)), undefined, 'nor its bare SHA-256')
  t.ok(store.accessTokens.get(tokenKey(token)), 'its key (issue time and SHA-256) is')
  t.same(tokens.verify(token)?.scopes, ['s'])
  f.time += 3599 * 1000
  t.ok(tokens.verify(token), 'valid one second before expiry')
  f.time += 1000
  t.equal(tokens.verify(token), undefined, 'refused at expiry, even from the cache')
  t.equal(tokens.verify('unknown'), undefined)

  const second = await tokens.issue({ client: 'c', tenant: 'demo', scopes: [], sub: undefined })
  t.ok(tokens.verify(second.token))
  t.equal(await tokens.revoke(second.token), true)
  t.equal(tokens.verify(second.token), undefined, 'refused at once after revocation')

  const third = await tokens.issue({ client: 'c', tenant: 'demo', scopes: [], sub: undefined })
  t.equal(await tokens.sweep(), 1, 'the expired first token is swept')
  t.ok(tokens.verify(third.token), 'the live one stays')
  f.time += 3601 * 1000
  t.equal(await tokens.sweep(), 1)
  t.equal([...store.accessTokens.getKeys()].length, 0)
})

t.test('the sweep reads the expiry index: it removes expired tokens and their entries, and indexes tokens of earlier builds', async (t) => {
  const f = fixture(t, 5_000_000)
  let store = f.store
  // A token as an earlier build stored it: the record, no index entry.
  const old = new AccessTokens(store, 60).mint({ client: 'c', tenant: 'demo', scopes: [], sub: undefined })
  await store.accessTokens.put(old.hash, old.record)
  await store.env.close()

  store = f.store = openAuthStore(f.dir)
  t.equal(store.accessTokenExpiry.getKeysCount(), 0, 'no index entry before the start')
  const tokens = new AccessTokens(store, 3600)
  await store.env.flushed
  t.same([...store.accessTokenExpiry.getKeys()], [[old.record.exp, old.hash]], 'indexed at start')

  const live = await tokens.issue({ client: 'c', tenant: 'demo', scopes: [], sub: undefined })
  const revoked = await tokens.issue({ client: 'c', tenant: 'demo', scopes: [], sub: undefined })
  t.equal(await tokens.revoke(revoked.token), true)
  t.equal(await tokens.revoke(revoked.token), false, 'a second revocation finds nothing')
  t.equal(store.accessTokenExpiry.getKeysCount(), 2, 'the revoked token left the index')

  f.time += 61_000
  t.equal(await tokens.sweep(), 1, 'only the expired old token is swept')
  t.equal(store.accessTokens.get(old.hash), undefined)
  t.ok(tokens.verify(live.token), 'the live token stays')
  t.same([...store.accessTokenExpiry.getKeys()], [[live.record.exp, tokenKey(live.token)]])
  f.time += 3600_000
  t.equal(await tokens.sweep(), 1)
  t.equal(store.accessTokens.getKeysCount() + store.accessTokenExpiry.getKeysCount(), 0, 'nothing left in either')
})

t.test('a token presented again is not hashed again, and a revocation still ends it at once', async (t) => {
  const f = fixture(t, 1_000_000)
  let hashed = 0
  const tokens = new AccessTokens(f.store, 3600, (token) => { hashed++; return sha256(token) })
  const { token } = await tokens.issue({ client: 'c', tenant: 'demo', scopes: ['s'], sub: 'u' })
  const other = await tokens.issue({ client: 'd', tenant: 'demo', scopes: ['s'], sub: 'v' })
  hashed = 0
  for (let i = 0; i < 5; i++) t.ok(tokens.verify(token))
  t.equal(hashed, 1, 'five checks, one hash')
  t.equal(await tokens.revoke(token), true)
  t.equal(tokens.verify(token), undefined, 'revoked: refused although its hash is remembered')
  t.equal(hashed, 1)

  t.ok(tokens.verify(other.token))
  t.equal(await tokens.revokeWhere((r) => r.client === 'd'), 1)
  t.equal(tokens.verify(other.token), undefined, 'revoked by a scan (a deleted client or user): refused at once')

  const third = await tokens.issue({ client: 'e', tenant: 'demo', scopes: ['s'], sub: undefined })
  t.ok(tokens.verify(third.token))
  await tokens.revokeHash(sha256(third.token))
  t.equal(tokens.verify(third.token), undefined, 'revoked by hash (a refresh token ending its access tokens): refused at once')
})

t.test('a token being revoked is refused at once: a read before the removal commits neither finds nor re-caches it', async (t) => {
  const f = fixture(t, 1_000_000)
  const tokens = new AccessTokens(f.store, 3600)
  const a = await tokens.issue({ client: 'c', tenant: 'demo', scopes: ['s'], sub: undefined })
  const b = await tokens.issue({ client: 'gone', tenant: 'demo', scopes: ['s'], sub: undefined })
  t.ok(tokens.verify(a.token) && tokens.verify(b.token), 'both verified and cached')
  const revoking = tokens.revoke(a.token)
  const removingClient = tokens.revokeWhere((r) => r.client === 'gone')
  t.equal(tokens.verify(a.token), undefined, 'refused while its removal is not yet committed')
  t.equal(tokens.verify(b.token), undefined, 'likewise for a removal by scan')
  t.equal(await revoking, true)
  t.equal(await removingClient, 1)
  t.equal(tokens.verify(a.token), undefined, 'and after')
  t.equal(tokens.verify(b.token), undefined)
})

t.test('a token an earlier build issued (256 random bits, stored under its SHA-256) still verifies and is revoked', async (t) => {
  const f = fixture(t, 1_000_000)
  const tokens = new AccessTokens(f.store, 3600)
  const token = randomToken()
  const record = { client: 'c', tenant: 'demo', scopes: ['s'], sub: undefined, clientAuthenticated: true, iat: f.time, exp: f.time + 3600_000 }
  await f.store.accessTokens.put(sha256(token), record)
  await f.store.accessTokenExpiry.put([record.exp, sha256(token)], 1)
  t.same(tokens.verify(token)?.scopes, ['s'])
  t.equal(await tokens.revoke(token), true)
  t.equal(tokens.verify(token), undefined, 'revoked')
  t.equal(f.store.accessTokens.getKeysCount(), 0)
  t.equal(f.store.accessTokenExpiry.getKeysCount(), 0, 'and its expiry entry')
})

t.test('tokens issued later are stored under later keys, so the tokens of one commit share pages', async (t) => {
  const f = fixture(t, 1_700_000_000_000)
  const tokens = new AccessTokens(f.store, 3600)
  const issued: string[] = []
  for (let i = 0; i < 20; i++) {
    issued.push((await tokens.issue({ client: 'c', tenant: 'demo', scopes: [], sub: undefined })).token)
    f.time += 1 + i * 997
  }
  const keys = [...f.store.accessTokens.getKeys()] as string[]
  t.same(keys, issued.map(tokenKey), 'the store order is the issue order')
})
