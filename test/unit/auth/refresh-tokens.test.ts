// The refresh tokens' user index, in-process: a user's tokens are exactly
// theirs for every id length up to the limit and ids that extend each other
// (NUL, '%', '/', Unicode); revoking ends them; and an index of an earlier
// build (`${sub}\0${hash}` strings) is rebuilt.
import t from 'tap'
import { AccessTokens } from '../../../src/auth/models/access-tokens'
import type { GrantFields } from '../../../src/auth/models/auth-store'
import { MAX_NAME_CHARS } from '../../../src/model/name-limit'
import { RefreshTokens } from '../../../src/auth/models/refresh-tokens'
import { tempAuthStore } from '../../helpers/auth-store'
import { pick, seeded, ATOMS } from '../../helpers/key-strings'

const grant = (sub: string, client = 'web-app'): GrantFields => ({ client, tenant: 'demo', scopes: ['openid'], sub })

t.test('each user lists exactly their tokens, for every id length up to the limit', async (t) => {
  const { store } = tempAuthStore(t)
  const access = new AccessTokens(store, 3600)
  const refresh = new RefreshTokens(store, access)
  const rnd = seeded(11)
  const users: string[] = []
  for (let length = 1; length <= MAX_NAME_CHARS; length++) {
    let sub = ''
    while (sub.length < length) sub += pick(rnd, ATOMS)
    users.push(sub.slice(0, length))
  }
  // Ids that extend one another: a range too wide or too narrow shows at once.
  const base = users[40]!
  users.push(`${base}\u0000`, `${base}\u0000x`, `${base}\u0001`, `${base}/`, `${base}%00`, `${base}😀`)
  const mine = new Map<string, string[]>()
  await store.env.transaction(() => {
    for (const sub of users) {
      for (let i = 0; i < 2; i++) {
        const minted = refresh.mint(grant(sub, i === 0 ? 'web-app' : 'other-app'))
        const token = access.mint(grant(sub))
        refresh.put(minted, { hash: token.hash, exp: token.record.exp })
        mine.set(sub, [...(mine.get(sub) ?? []), minted.hash])
      }
    }
  })
  for (const sub of users) {
    const listed = refresh.ofUser(sub).map((r) => r.hash).sort()
    if (JSON.stringify(listed) !== JSON.stringify([...mine.get(sub)!].sort())) t.fail(`${JSON.stringify(sub)} lists ${listed.length} tokens`)
    if (refresh.ofUser(sub, 'other-app').length !== 1) t.fail(`${JSON.stringify(sub)}: the client filter`)
  }
  t.pass(`${users.length} users checked`)

  const long = users[MAX_NAME_CHARS - 1]!
  for (const { hash } of refresh.ofUser(long)) t.ok(await refresh.revokeHash(hash))
  t.same(refresh.ofUser(long), [], 'revoking ends them')
  t.equal(refresh.ofUser(users[MAX_NAME_CHARS - 2]!).length, 2, 'and only them')
})

t.test('an index of an earlier build is rebuilt from the tokens', async (t) => {
  const { store } = tempAuthStore(t)
  const access = new AccessTokens(store, 3600)
  const refresh = new RefreshTokens(store, access)
  const sub = 'a-user-whose-id-is-longer-than-twenty@example.com'
  const minted = refresh.mint(grant(sub))
  await store.env.transaction(() => {
    void store.refreshTokens.put(minted.hash, minted.record)
    // What earlier builds wrote; typed as the index is no longer.
    const legacy = store.refreshTokensByUser as unknown as { putSync(key: string, value: string): void }
    legacy.putSync(`short\u0000${minted.hash}`, minted.hash)
  })
  t.same(refresh.ofUser(sub), [], 'not found through the old entry')
  t.equal(await refresh.rebuildUserIndex(), 1)
  t.same(refresh.ofUser(sub).map((r) => r.hash), [minted.hash])
  t.same([...store.refreshTokensByUser.getKeys()], [[sub, minted.hash]], 'the old entry is gone')
})
