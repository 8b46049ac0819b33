// The upstream's keys: a token signed with a kid the cache does not know
// makes one fresh JWKS fetch (the upstream rotated), but not more often
// than every 10 s, so forged kids cannot make the server hammer the upstream.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose'
import { useClock } from '../../../src/core/clock'
import { UpstreamKeys } from '../../../src/auth/federation/upstream-keys'

t.test('an unknown kid refreshes the key set once, within the cool-down not again', async (t) => {
  const clock = { time: Date.now() }
  t.teardown(useClock({ now: () => clock.time }))
  const a = await generateKeyPair('RS256')
  const b = await generateKeyPair('RS256')
  const jwk = async (k: CryptoKey, kid: string): Promise<JWK> => ({ ...(await exportJWK(k)), kid, alg: 'RS256' })
  let keys: JWK[] = [await jwk(a.publicKey, 'a')]
  let fetches = 0
  const server = createServer((_req, res) => {
    fetches++
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const jwksUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`
  const sign = (key: CryptoKey, kid: string): Promise<string> =>
    new SignJWT({ sub: 'u' }).setProtectedHeader({ alg: 'RS256', kid }).setIssuedAt(Math.floor(clock.time / 1000)).setExpirationTime(Math.floor(clock.time / 1000) + 60).sign(key)
  const options = { algorithms: ['RS256'], currentDate: new Date(clock.time) }

  const upstream = new UpstreamKeys()
  t.equal((await upstream.verify(await sign(a.privateKey, 'a'), jwksUri, options)).sub, 'u')
  t.equal(fetches, 1)
  keys = [...keys, await jwk(b.publicKey, 'b')]
  await t.rejects(upstream.verify(await sign(b.privateKey, 'b'), jwksUri, options), /no applicable key/i, 'within the cool-down: not fetched again')
  t.equal(fetches, 1)
  clock.time += 11_000
  const later = { ...options, currentDate: new Date(clock.time) }
  t.equal((await upstream.verify(await sign(b.privateKey, 'b'), jwksUri, later)).sub, 'u', 'after it: fetched again, the new key found')
  t.equal(fetches, 2)
  t.equal((await upstream.verify(await sign(a.privateKey, 'a'), jwksUri, later)).sub, 'u')
  t.equal(fetches, 2, 'a known kid needs no fetch')
})
