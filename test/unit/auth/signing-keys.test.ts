// Signing keys in-process with an injected clock: sealing under the master
// key, rotation, the publication window of a retired key, pruning, ID token
// claims and id_token_hint verification.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { openAuthStore, type UserRecord } from '../../../src/auth/models/auth-store'
import { tempAuthStore } from '../../helpers/auth-store'
import { idTokenClaims, signIdToken, verifyIdTokenHint } from '../../../src/auth/helpers/id-tokens'
import { CLOCK_MARGIN_MS, SigningKeys } from '../../../src/auth/models/signing-keys'
import type { KeySigner } from '../../../src/auth/helpers/signing-pool'
import { generateSigningKey, seal, signJwt, unseal } from '../../../workers/crypto/signing-key'

const masterKey = randomBytes(32)
/** The pool's work, done in-process. */
const signer: KeySigner = {
  generate: () => generateSigningKey(masterKey),
  sign: (kid, sealed, claims) => signJwt(masterKey, kid, sealed, claims),
}
const user: UserRecord = { id: 'u1', username: 'u', email: 'u@example.com', tenants: {}, password: { alg: 'scrypt', salt: '', hash: '', N: 1, r: 1, p: 1 } }
const ISSUER = 'https://id.example/oauth2/v1'

t.test('sealing: AES-GCM under a key derived from the master key, bound to the kid', async (t) => {
  const sealed = seal(masterKey, 'k1', Buffer.from('secret key bytes'))
  t.notOk(Buffer.from(sealed, 'base64url').includes(Buffer.from('secret key bytes')))
  t.equal(unseal(masterKey, 'k1', sealed).toString(), 'secret key bytes')
  t.throws(() => unseal(masterKey, 'k2', sealed), 'another kid does not open it')
  t.throws(() => unseal(randomBytes(32), 'k1', sealed), 'another master key does not open it')
  const raw = Buffer.from(sealed, 'base64url')
  raw[raw.length - 1]! ^= 1
  t.throws(() => unseal(masterKey, 'k1', raw.toString('base64url')), 'a tampered key does not open')
  t.not(seal(masterKey, 'k1', Buffer.from('x')), seal(masterKey, 'k1', Buffer.from('x')), 'a fresh nonce each time')
})

t.test('rotation and the publication window', async (t) => {
  const { store, clock } = tempAuthStore(t)
  const keys = new SigningKeys(store, signer, 3600)
  t.equal(keys.active(), undefined)
  await keys.ensureActiveKey()
  const k1 = keys.active()!
  await keys.ensureActiveKey()
  t.equal(keys.active()!.kid, k1.kid, 'only made once')
  t.same(keys.jwks().keys.map((k) => k.kid), [k1.kid])
  t.notOk('d' in keys.jwks().keys[0]!)

  const first = await signIdToken(keys, { issuer: ISSUER, clientId: 'c', user, scopes: ['openid'], nonce: 'n', authTime: clock.time, accessToken: 'A', ttlSeconds: 3600 })
  t.equal(decodeProtectedHeader(first).kid, k1.kid)

  clock.time += 1000
  const k2 = await keys.rotate()
  t.equal(keys.active()!.kid, k2.kid)
  t.same(keys.published().map((k) => k.kid), [k2.kid, k1.kid])
  const second = await keys.sign({ iss: ISSUER, sub: 'u1', aud: 'c', iat: Math.floor(clock.time / 1000), exp: Math.floor(clock.time / 1000) + 3600 })
  t.equal(decodeProtectedHeader(second).kid, k2.kid)
  const jwks = createLocalJWKSet(keys.jwks() as Parameters<typeof createLocalJWKSet>[0])
  await jwtVerify(first, jwks, { issuer: ISSUER, audience: 'c', currentDate: new Date(clock.time) })
  await jwtVerify(second, jwks, { issuer: ISSUER, audience: 'c', currentDate: new Date(clock.time) })
  t.pass('both verify against the published set')

  clock.time += 3600_000 + CLOCK_MARGIN_MS - 1
  t.equal(keys.published().length, 2, 'the retired key is published until its tokens have expired, with the margin')
  t.equal(await keys.prune(), 0)
  clock.time += 1
  t.same(keys.published().map((k) => k.kid), [k2.kid])
  t.equal(await keys.prune(), 1)
  t.equal(store.signingKeys.get(k1.kid), undefined, 'then deleted')
})

t.test('ID token claims and id_token_hint', async (t) => {
  const { store, clock } = tempAuthStore(t)
  const keys = new SigningKeys(store, signer, 3600)
  await keys.ensureActiveKey()
  const input = { issuer: ISSUER, clientId: 'c', user, scopes: ['openid'], nonce: 'n', authTime: clock.time - 5000, accessToken: 'A', ttlSeconds: 3600 }
  const claims = idTokenClaims(input)
  t.same(Object.keys(claims).sort(), ['at_hash', 'aud', 'auth_time', 'email', 'email_verified', 'exp', 'iat', 'iss', 'nonce', 'sub'])
  t.match(claims, {
    iss: ISSUER, sub: 'u1', aud: 'c', email: 'u@example.com', email_verified: false, nonce: 'n', iat: clock.time / 1000, exp: clock.time / 1000 + 3600, auth_time: clock.time / 1000 - 5,
  })
  t.equal(idTokenClaims({ ...input, nonce: undefined }).nonce, undefined)
  // The standard claims of the profile and email scopes (OpenID Connect Core 5.4), from the user record.
  const withProfile = idTokenClaims({ ...input, user: { ...user, email_verified: true }, scopes: ['openid', 'profile', 'email'] })
  t.match(withProfile, { preferred_username: user.username, email: 'u@example.com', email_verified: true })
  t.equal(claims.preferred_username, undefined, 'no username without the profile scope')

  const token = await signIdToken(keys, input)
  t.same(await verifyIdTokenHint(keys, ISSUER, token, 'c'), { sub: 'u1', authTime: clock.time - 5000 })
  t.equal(await verifyIdTokenHint(keys, ISSUER, token, 'other'), undefined, 'another audience')
  t.equal(await verifyIdTokenHint(keys, 'https://other/oauth2/v1', token, 'c'), undefined, 'another issuer')
  t.equal(await verifyIdTokenHint(keys, ISSUER, 'not.a.jwt', 'c'), undefined)
  const foreignDir = mkdtempSync(join(tmpdir(), 'id-token-foreign-'))
  const foreignStore = openAuthStore(foreignDir)
  t.teardown(async () => {
    await foreignStore.env.close()
    rmSync(foreignDir, { recursive: true, force: true })
  })
  const foreign = new SigningKeys(foreignStore, signer, 3600)
  await foreign.ensureActiveKey()
  t.equal(await verifyIdTokenHint(keys, ISSUER, await signIdToken(foreign, input), 'c'), undefined, 'signed by a key this server never published')
  clock.time += 3600_000
  t.equal(await verifyIdTokenHint(keys, ISSUER, token, 'c'), undefined, 'expired')
})
