// Access tokens with an injected clock: valid until the TTL, refused after,
// refused once revoked, swept when expired; only the hash is stored.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AccessTokens } from '../../src/auth/access-tokens'
import { openAuthStore } from '../../src/auth/auth-store'
import { sha256 } from '../../src/auth/secrets'
import { useClock } from '../../src/clock'

t.test('expiry, revocation and sweep follow the injected clock', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tokens-test-'))
  const store = openAuthStore(dir)
  let time = 1_000_000
  const restore = useClock({ now: () => time })
  t.teardown(async () => {
    restore()
    await store.env.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const tokens = new AccessTokens(store, 3600)
  const { token, record } = await tokens.issue({ client: 'c', tenant: 'demo', scopes: ['s'], sub: undefined })
  t.equal(record.exp, time + 3600 * 1000)
  t.equal(store.accessTokens.get(token), undefined, 'the raw token is not a key')
  t.ok(store.accessTokens.get(sha256(token)), 'its SHA-256 is')
  t.same(tokens.verify(token)?.scopes, ['s'])
  time += 3599 * 1000
  t.ok(tokens.verify(token), 'valid one second before expiry')
  time += 1000
  t.equal(tokens.verify(token), undefined, 'refused at expiry, even from the cache')
  t.equal(tokens.verify('unknown'), undefined)

  const second = await tokens.issue({ client: 'c', tenant: 'demo', scopes: [], sub: undefined })
  t.ok(tokens.verify(second.token))
  t.equal(await tokens.revoke(second.token), true)
  t.equal(tokens.verify(second.token), undefined, 'refused at once after revocation')

  const third = await tokens.issue({ client: 'c', tenant: 'demo', scopes: [], sub: undefined })
  t.equal(await tokens.sweep(), 1, 'the expired first token is swept')
  t.ok(tokens.verify(third.token), 'the live one stays')
  time += 3601 * 1000
  t.equal(await tokens.sweep(), 1)
  t.equal([...store.accessTokens.getKeys()].length, 0)
})
