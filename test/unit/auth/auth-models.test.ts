// The auth store's models, in-process: an authorization code is found while
// live, consumed once in a transaction (a second or concurrent exchange
// loses and revokes what the first got), and a user and its username index
// change together (rename, taken name, delete, bootstrap upsert).
import t from 'tap'
import { AccessTokens } from '../../../src/auth/models/access-tokens'
import type { ClientRecord, CodeRecord, GrantFields, UserRecord } from '../../../src/auth/models/auth-store'
import { AuthorizationCodes, CODE_TTL_MS } from '../../../src/auth/models/authorization-codes'
import { authModels } from '../../../src/auth/models/index'
import { RefreshTokens } from '../../../src/auth/models/refresh-tokens'
import { SCRYPT_PARAMS } from '../../../workers/crypto/password-hash'
import { tempAuthStore } from '../../helpers/auth-store'

const grant: GrantFields = { client: 'web-app', tenant: 'demo', scopes: ['openid'], sub: 'alice' }
const codeFields: Omit<CodeRecord, 'exp'> = {
  ...grant, redirectUri: 'https://app.example/cb', redirectUriGiven: true,
  codeChallenge: undefined, codeChallengeMethod: undefined, nonce: undefined, authTime: 1,
}

function codeModels(t: Parameters<typeof tempAuthStore>[0]) {
  const { store, clock } = tempAuthStore(t)
  const access = new AccessTokens(store, 3600)
  const refresh = new RefreshTokens(store, access)
  return { store, clock, access, refresh, codes: new AuthorizationCodes(store, access, refresh) }
}

/** The tokens an exchange would mint. */
function minted(m: ReturnType<typeof codeModels>) {
  const refresh = m.refresh.mint(grant)
  return { refresh, access: m.access.mint({ ...grant, refresh: refresh.hash }) }
}

t.test('find: a live code, unused or used; never an expired or unknown one', async (t) => {
  const m = codeModels(t)
  const code = await m.codes.issue(codeFields)
  t.equal(m.codes.find(code)?.redirectUri, 'https://app.example/cb')
  t.equal(m.codes.find('not-a-code'), undefined)
  m.clock.time += CODE_TTL_MS
  t.equal(m.codes.find(code), undefined, 'expired')
})

t.test('consume: once; a replay loses and revokes what the first exchange gave', async (t) => {
  const m = codeModels(t)
  const code = await m.codes.issue(codeFields)
  const first = minted(m)
  t.equal(await m.codes.consume(code, first.access, first.refresh), true)
  t.ok(m.access.verify(first.access.token), 'access token stored')
  t.ok(m.refresh.find(first.refresh.token), 'refresh token stored')
  t.same(m.codes.find(code)?.used, { access: first.access.hash, refresh: first.refresh.hash })

  const second = minted(m)
  t.equal(await m.codes.consume(code, second.access, second.refresh), false)
  t.equal(m.access.verify(second.access.token), undefined, 'the loser stored nothing')
  t.equal(m.refresh.find(second.refresh.token), undefined)
  t.equal(m.access.verify(first.access.token), undefined, 'the first access token is revoked')
  t.equal(m.refresh.find(first.refresh.token), undefined, 'the first refresh token is revoked')
})

t.test('consume: of two concurrent exchanges exactly one wins', async (t) => {
  const m = codeModels(t)
  const code = await m.codes.issue(codeFields)
  const a = minted(m)
  const b = minted(m)
  const results = await Promise.all([m.codes.consume(code, a.access, a.refresh), m.codes.consume(code, b.access, b.refresh)])
  t.same(results.filter((r) => r).length, 1)
  const winner = results[0] ? a : b
  t.equal(m.access.verify(winner.access.token), undefined, 'the replay revoked the winner too')
})

t.test('revokeGiven ends what a used code gave; an unused code gives nothing to revoke', async (t) => {
  const m = codeModels(t)
  const code = await m.codes.issue(codeFields)
  await m.codes.revokeGiven(m.codes.find(code)!)
  const first = minted(m)
  await m.codes.consume(code, first.access, first.refresh)
  await m.codes.revokeGiven(m.codes.find(code)!)
  t.equal(m.access.verify(first.access.token), undefined)
  t.equal(m.refresh.find(first.refresh.token), undefined)
})

t.test('removeForClient ends the codes of one client only', async (t) => {
  const m = codeModels(t)
  const mine = await m.codes.issue(codeFields)
  const other = await m.codes.issue({ ...codeFields, client: 'other-app' })
  m.codes.removeForClient('web-app')
  await m.store.env.flushed
  t.equal(m.codes.find(mine), undefined)
  t.ok(m.codes.find(other))
})

const user = (id: string, username: string): UserRecord => ({
  id, username, email: `${id}@example.com`, tenants: { demo: [] }, password: { alg: 'scrypt', hash: 'h', salt: 's', ...SCRYPT_PARAMS },
})

t.test('users: the username index follows saves, renames and deletes', async (t) => {
  const { store } = tempAuthStore(t)
  const { users } = authModels(store)
  t.equal(await users.save(user('alice', 'al')), true)
  t.equal(users.findByUsername('al')?.id, 'alice')
  t.equal(await users.save(user('bob', 'al')), false, 'a taken username')
  t.equal(users.exists('bob'), false)
  t.equal(await users.save(user('alice', 'alice')), true, 'a rename')
  t.equal(users.ownerOf('al'), undefined, 'the old username is free')
  t.equal(await users.save(user('bob', 'al')), true)
  t.same(users.memberOf('demo').map((u) => u.id).sort(), ['alice', 'bob'])
  await users.remove('alice')
  await users.durable()
  t.equal(users.find('alice'), undefined)
  t.equal(users.ownerOf('alice'), undefined, 'a deleted user frees the username')
  t.equal(users.ownerOf('al'), 'bob')
})

t.test('users: putSync (the bootstrap) renames without freeing a name another user holds', async (t) => {
  const { store } = tempAuthStore(t)
  const { users } = authModels(store)
  await users.save(user('alice', 'al'))
  await store.env.transaction(() => users.putSync(user('alice', 'alice')))
  t.equal(users.ownerOf('al'), undefined)
  t.equal(users.ownerOf('alice'), 'alice')
  // bob's record names "old", which the index gives to carol: the rename leaves carol's entry.
  await store.usernames.put('old', 'carol')
  await store.users.put('bob', user('bob', 'old'))
  await store.env.transaction(() => users.putSync(user('bob', 'bob')))
  t.equal(users.ownerOf('old'), 'carol', 'an index entry of another user stays')
  t.equal(users.ownerOf('bob'), 'bob')
})

t.test('keyed models: save is durable, remove then durable, all and find', async (t) => {
  const { store } = tempAuthStore(t)
  const m = authModels(store)
  await m.tenants.save('demo', { id: 'demo', org: 'demo-org' })
  await m.roles.save('reader', ['a', 'b'])
  await m.subscriptions.save('s1', { id: 's1', tenant: 'demo', package: 'pg' })
  t.same(m.tenants.all(), [{ id: 'demo', org: 'demo-org' }])
  t.same(m.roles.entries(), [['reader', ['a', 'b']]])
  t.same(m.subscriptions.ofTenant('demo').map((s) => s.id), ['s1'])
  t.same(m.subscriptions.ofPackage('other'), [])
  await m.tenants.remove('demo')
  await m.tenants.durable()
  t.equal(m.tenants.exists('demo'), false)
})

t.test('clients: the cached record follows every save, putSync and remove (a changed secret or scope counts at once)', async (t) => {
  const { store } = tempAuthStore(t)
  const { clients } = authModels(store)
  const client = (secret: string, scopes: string[]): ClientRecord => ({
    client_id: 'svc', tenant: 'demo', secret: { alg: 'sha256', hash: secret }, redirect_uris: [], scopes, grant_types: ['client_credentials'],
  })
  await clients.save('svc', client('h1', ['a']))
  t.same(clients.find('svc'), client('h1', ['a']), 'read once: now cached')
  await clients.save('svc', client('h2', ['a', 'b']))
  t.same(clients.find('svc'), client('h2', ['a', 'b']), 'a rotated secret replaces the cached record')
  await store.env.transaction(() => clients.putSync('svc', client('h3', ['c'])))
  t.same(clients.find('svc'), client('h3', ['c']), 'the bootstrap import too')
  await clients.remove('svc')
  t.equal(clients.find('svc'), undefined, 'removed')
  await clients.durable()
  t.equal(clients.find('svc'), undefined, 'and still removed once durable')
  t.same(clients.all(), [])
})
