// Custom identity providers in-process: the bootstrap file's
// `identityProviders` read by the admin API's rules and stored with the
// client secret sealed (never the plain text; bound to the provider id);
// the upstream state is taken once and expires; links are keyed by
// provider and upstream subject.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { ConfigError } from '../../../src/config/load-config'
import { parseBootstrap } from '../../../src/bootstrap/bootstrap-file'
import { applyIdentityProviderBootstrap } from '../../../src/auth/federation/bootstrap'
import { sealSecret, unsealSecret } from '../../../src/auth/federation/sealed-secret'
import { authModels } from '../../../src/auth/models/index'
import { IdentityLinks, IdentityProviders, UPSTREAM_STATE_TTL_MS, UpstreamStates } from '../../../src/auth/models/identity-providers'
import { SCRYPT_PARAMS } from '../../../workers/crypto/password-hash'
import { tempAuthStore } from '../../helpers/auth-store'

const KEY = randomBytes(32)

t.test('the bootstrap file stores each provider with its secret sealed and defaults filled in', async (t) => {
  const { store } = tempAuthStore(t)
  await store.tenants.put('demo', { id: 'demo', org: 'demo-org' })
  await store.roles.put('reader', ['platform.profile_graph_view'])
  const boot = parseBootstrap({
    identityProviders: [
      { id: 'corp', issuer: 'https://login.corp.example', client_id: 'platform', client_secret: 'upstream-secret', provisioning: { tenants: { demo: ['reader'] } } },
      { id: 'public', issuer: 'https://id.example/realms/x', client_id: 'spa', scopes: ['openid'], claims: { username: 'email' }, link_by_verified_email: true },
    ],
  })
  await applyIdentityProviderBootstrap(store, boot.identityProviders, KEY)
  const providers = new IdentityProviders(store)
  const corp = providers.find('corp')!
  t.same({ ...corp, sealedSecret: undefined }, {
    id: 'corp', issuer: 'https://login.corp.example', client_id: 'platform', sealedSecret: undefined,
    scopes: ['openid', 'email', 'profile'], claims: { username: 'preferred_username', email: 'email' }, provisioning: { tenants: { demo: ['reader'] } },
  })
  t.notOk(JSON.stringify(corp).includes('upstream-secret'), 'the plain secret is not stored')
  t.equal(unsealSecret(KEY, 'corp', corp.sealedSecret!), 'upstream-secret')
  t.throws(() => unsealSecret(KEY, 'public', corp.sealedSecret!), 'a sealed secret is bound to its provider')
  t.throws(() => unsealSecret(randomBytes(32), 'corp', corp.sealedSecret!), 'and to the master key')
  const pub = providers.find('public')!
  t.equal(pub.sealedSecret, undefined)
  t.same(pub.claims, { username: 'email', email: 'email' })
  t.same(pub.provisioning, { link_by_verified_email: true })
})

t.test('a bad provider in the bootstrap file stops the start, naming it', async (t) => {
  const { store } = tempAuthStore(t)
  const cases: [unknown, RegExp][] = [
    [{ id: 'x', issuer: 'https://a.example', client_id: 'c' }, /identityProviders\[0\]: provisioning .* or link_by_verified_email/],
    [{ id: 'x', issuer: 'https://a.example', client_id: 'c', provisioning: { tenants: { nowhere: [] } } }, /tenant "nowhere" does not exist/],
    [{ id: 'x', issuer: 'mailto:a', client_id: 'c', link_by_verified_email: true }, /must be an http or https URL/],
    [{ issuer: 'https://a.example', client_id: 'c', link_by_verified_email: true }, /identityProviders\[0\]\.id must be a string/],
    [{ id: 'idp_legacy', issuer: 'https://a.example', client_id: 'c', link_by_verified_email: true }, /built-in identity provider/],
  ]
  for (const [doc, message] of cases) {
    const err = await applyIdentityProviderBootstrap(store, parseBootstrap({ identityProviders: [doc] }).identityProviders, KEY).catch((e: unknown) => e)
    t.type(err, ConfigError)
    t.match((err as Error).message, message)
  }
  t.same(new IdentityProviders(store).all(), [], 'nothing stored')
})

t.test('an upstream state is taken once, and not after it expired', async (t) => {
  const { store, clock } = tempAuthStore(t)
  const states = new UpstreamStates(store)
  const pending = { provider: 'corp', browser: 'b', nonce: 'n', codeVerifier: 'v', params: 'client_id=web-app' }
  await states.save('state-1', pending)
  t.match(await states.take('state-1'), pending)
  t.equal(await states.take('state-1'), undefined, 'a replay finds nothing')
  await states.save('state-2', pending)
  clock.time += UPSTREAM_STATE_TTL_MS
  t.equal(await states.take('state-2'), undefined, 'expired')
})

t.test('links: by provider and upstream subject; a taken username links nothing', async (t) => {
  const { store } = tempAuthStore(t)
  const { users } = authModels(store)
  const links = new IdentityLinks(store)
  const password = { alg: 'scrypt' as const, salt: '', hash: '', ...SCRYPT_PARAMS }
  const dan = { id: 'u1', username: 'dan', email: 'dan@example.com', password, tenants: {} }
  t.equal(await links.link(users, 'corp', 'sub-1', dan, true), true)
  t.equal(links.userOf('corp', 'sub-1'), 'u1')
  t.equal(links.userOf('other', 'sub-1'), undefined, 'the same subject of another provider is someone else')
  t.equal(await links.link(users, 'corp', 'sub-2', { ...dan, id: 'u2' }, true), false, 'username taken')
  t.equal(links.userOf('corp', 'sub-2'), undefined)
  t.equal(users.find('u2'), undefined)
  await links.removeProvider('corp')
  t.equal(links.userOf('corp', 'sub-1'), undefined)
  t.ok(sealSecret(KEY, 'a', 's') !== sealSecret(KEY, 'a', 's'), 'sealing uses a fresh IV')
})
