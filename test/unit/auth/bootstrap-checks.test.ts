// The bootstrap file is held to the admin API's rules (a client of an
// unknown tenant, a short password, a subscription to an unknown package are
// refused with one line), and a restart with an unchanged file runs no
// scrypt at all.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { applyAuthBootstrap } from '../../../src/auth/helpers/apply-bootstrap'
import { checkBootstrap } from '../../../src/auth/helpers/bootstrap-checks'
import type { AuthStore } from '../../../src/auth/models/auth-store'
import { authModels } from '../../../src/auth/models/index'
import type { ScryptHash } from '../../../src/auth/helpers/password-hasher'
import { parseBootstrap, type Bootstrap } from '../../../src/bootstrap/bootstrap-file'
import { ConfigError } from '../../../src/config/load-config'
import { SCRYPT_PARAMS } from '../../../workers/crypto/password-hash'
import { tempAuthStore } from '../../helpers/auth-store'

const FIXTURE = join(__dirname, '..', '..', 'fixtures', 'oauth-bootstrap.json')
type Doc = Record<string, unknown>
const fixtureDoc = (): Doc => JSON.parse(readFileSync(FIXTURE, 'utf8')) as Doc
const list = (doc: Doc, key: string): Doc[] => doc[key] as Doc[]

function refused(t: tap.Test, boot: Bootstrap, store: AuthStore, pattern: RegExp): string {
  const err = t.throws(() => checkBootstrap(boot, authModels(store))) as Error
  t.ok(err instanceof ConfigError, 'a ConfigError (one line at start)')
  t.match(err.message, pattern)
  return err.message
}

t.test('the test fixtures and the demo pass', async (t) => {
  const { store } = tempAuthStore(t)
  checkBootstrap(parseBootstrap(fixtureDoc()), authModels(store))
  checkBootstrap(parseBootstrap(JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'bootstrap', 'demo.json'), 'utf8'))), authModels(store))
  t.pass()
})

t.test('what the admin API refuses, the bootstrap file may not do', async (t) => {
  const { store } = tempAuthStore(t)
  const doc = (change: (d: Doc) => void): Bootstrap => {
    const d = fixtureDoc()
    change(d)
    return parseBootstrap(d)
  }
  refused(t, doc((d) => { list(d, 'clients')[0]!.tenant = 'nowhere' }), store, /^bootstrap file: clients\[0\]\.tenant: tenant "nowhere" does not exist$/)
  // A user's roles are kept under the tenant's name, which the store's msgpack reads back as "__proto_".
  refused(t, doc((d) => { list(d, 'tenants')[0]!.id = '__proto__' }), store, /^bootstrap file: tenants\[0\]\.id "__proto__" is not acceptable: .*other than "__proto__"$/)
  const short = refused(t, doc((d) => { list(d, 'users')[0]!.password = 'abc' }), store, /^bootstrap file: users\[0\]\.password is not acceptable: 8 to 1024 characters/)
  t.notMatch(short, /abc/, 'the password is not echoed')
  refused(t, doc((d) => { list(d, 'clients')[0]!.client_secret = 'short' }), store, /^bootstrap file: clients\[0\]\.client_secret is not acceptable/)
  refused(t, doc((d) => { list(d, 'subscriptions')[0]!.package = 'nothing' }), store, /^bootstrap file: subscriptions\[0\]\.package: package "nothing" does not exist$/)
  refused(t, doc((d) => { list(d, 'subscriptions')[0]!.tenant = 'nobody' }), store, /subscriptions\[0\]\.tenant: tenant "nobody" does not exist/)
  refused(t, doc((d) => { list(d, 'subscriptions')[1]!.tenant = 'acme'; list(d, 'subscriptions')[1]!.package = 'profile-graph' }), store, /subscriptions\[1\]: tenant "acme" already subscribes to "profile-graph"/)
  refused(t, doc((d) => { (list(d, 'packages')[0]!.provider as Doc).org = 'other-org' }), store, /packages\[0\]\.provider\.org: tenant "demo" belongs to organization "demo-org"/)
  refused(t, doc((d) => { list(d, 'users')[0]!.tenants = { mars: ['graph-writer'] } }), store, /users\[0\]\.tenants: tenant "mars" does not exist/)
  refused(t, doc((d) => { list(d, 'users')[0]!.email = 'not-an-email' }), store, /users\[0\]\.email "not-an-email" is not acceptable/)
  refused(t, doc((d) => { list(d, 'tenants')[0]!.id = 'two words' }), store, /tenants\[0\]\.id "two words" is not acceptable/)
})

t.test('references may resolve to what the store already holds', async (t) => {
  const { store } = tempAuthStore(t)
  await store.tenants.put('stored', { id: 'stored', org: 'stored-org' })
  const boot = parseBootstrap({ clients: [{ client_id: 'c', client_secret: 'long-enough', tenant: 'stored', grant_types: ['client_credentials'] }] })
  checkBootstrap(boot, authModels(store))
  await store.usernames.put('taken', 'someone-else')
  refused(t, parseBootstrap({ tenants: [{ id: 't', org: 'o' }], users: [{ id: 'u', username: 'taken', password: 'long-enough', email: 'u@example.com' }] }), store,
    /users\[0\]\.username "taken" is taken by user "someone-else"/)
})

t.test('a restart with an unchanged file runs no scrypt; a changed secret is checked and re-hashed', async (t) => {
  const { store } = tempAuthStore(t)
  const calls = { hash: 0, verify: 0 }
  const fakeHash = (secret: string): ScryptHash => ({ alg: 'scrypt', salt: 's', hash: Buffer.from(secret).toString('base64'), ...SCRYPT_PARAMS })
  const hasher = {
    hash: async (secret: string): Promise<ScryptHash> => { calls.hash++; return fakeHash(secret) },
    verify: async (secret: string, stored: ScryptHash): Promise<boolean> => { calls.verify++; return stored.hash === fakeHash(secret).hash },
  }
  const key = Buffer.alloc(32, 1)
  const doc = fixtureDoc()
  const secrets = list(doc, 'clients').filter((c) => c.client_secret !== undefined).length + list(doc, 'users').length
  await applyAuthBootstrap(store, hasher, parseBootstrap(doc), key)
  t.same(calls, { hash: secrets, verify: 0 }, 'the first start hashes every secret')

  calls.hash = 0
  await applyAuthBootstrap(store, hasher, parseBootstrap(doc), key)
  t.same(calls, { hash: 0, verify: 0 }, 'an unchanged file: no scrypt at all')

  list(doc, 'users')[0]!.password = 'a-new-password'
  await applyAuthBootstrap(store, hasher, parseBootstrap(doc), key)
  t.same(calls, { hash: 1, verify: 1 }, 'only the changed password is checked, then hashed')
  t.equal(store.users.get('alice')?.password.hash, fakeHash('a-new-password').hash)

  // A password changed through the admin API (new hash, digest left behind): the file's value is checked again.
  const alice = store.users.get('alice')!
  await store.users.put('alice', { ...alice, password: fakeHash('set-by-admin') })
  calls.hash = 0
  calls.verify = 0
  await applyAuthBootstrap(store, hasher, parseBootstrap(doc), key)
  t.same(calls, { hash: 1, verify: 1 }, 'the digest no longer matches the stored hash: verified, then the file wins')

  calls.hash = 0
  calls.verify = 0
  await applyAuthBootstrap(store, hasher, parseBootstrap(doc), Buffer.alloc(32, 2))
  t.same(calls, { hash: 0, verify: secrets }, 'another master key: the digests do not match, scrypt verifies each')
})
