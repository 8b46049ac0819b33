import t from 'tap'
import { authenticateClient, invalidClient, presentedCredentials, type SecretChecks } from '../../../src/auth/helpers/client-authentication'
import { sha256 } from '../../../src/auth/helpers/secrets'
import type { ClientRecord } from '../../../src/auth/models/auth-store'
import type { Clients } from '../../../src/auth/models/clients'
import { ApiError } from '../../../src/core/errors'

const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const form = (s = ''): URLSearchParams => new URLSearchParams(s)

function fails(t: tap.Test, fn: () => unknown, expected: { status: number; type: string; error: string; description: RegExp; basic?: boolean }): void {
  const err = t.throws(fn) as ApiError
  t.ok(err instanceof ApiError)
  t.equal(err.status, expected.status)
  t.equal(err.type, expected.type)
  t.equal(err.oauth?.error, expected.error)
  t.match(err.oauth?.error_description, expected.description)
  if (expected.basic === true) t.same(err.headers, { 'www-authenticate': 'Basic realm="oauth2"' })
  else if (expected.basic === false) t.same(err.headers, {})
}

t.test('Basic credentials', async (t) => {
  t.same(presentedCredentials(basic('demo-enricher', 'demo-secret'), form()), { clientId: 'demo-enricher', clientSecret: 'demo-secret', via: 'basic' })
  t.same(presentedCredentials(`basic ${Buffer.from('a:b').toString('base64')}`, form()), { clientId: 'a', clientSecret: 'b', via: 'basic' }, 'scheme is case-insensitive')
  t.same(presentedCredentials(`BASIC   ${Buffer.from('a:b').toString('base64')}  `, form()), { clientId: 'a', clientSecret: 'b', via: 'basic' })
})

t.test('Basic credentials are form-urlencoded (RFC 6749 2.3.1)', async (t) => {
  t.same(presentedCredentials(basic('my%20client', 's%3Aec%2Fret%25'), form()), { clientId: 'my client', clientSecret: 's:ec/ret%', via: 'basic' })
  t.same(presentedCredentials(basic('a+b', 'c+d'), form()), { clientId: 'a b', clientSecret: 'c d', via: 'basic' }, '+ is a space')
  t.same(presentedCredentials(basic('%C3%A9t%C3%A9', 'x'), form()), { clientId: 'été', clientSecret: 'x', via: 'basic' })
  t.same(presentedCredentials(basic('id', 'a:b:c'), form()), { clientId: 'id', clientSecret: 'a:b:c', via: 'basic' }, 'only the first colon separates')
  t.same(presentedCredentials(basic('id', ''), form()), { clientId: 'id', clientSecret: '', via: 'basic' })
})

t.test('Basic with the same client_id in the body is fine', async (t) => {
  t.same(presentedCredentials(basic('c1', 's1'), form('client_id=c1&grant_type=client_credentials')), { clientId: 'c1', clientSecret: 's1', via: 'basic' })
  t.same(presentedCredentials(basic('my%20client', 's'), form('client_id=my+client')), { clientId: 'my client', clientSecret: 's', via: 'basic' })
})

t.test('a conflicting client_id in the body is invalid_request', async (t) => {
  fails(t, () => presentedCredentials(basic('c1', 's1'), form('client_id=c2')),
    { status: 400, type: 'bad_request', error: 'invalid_request', description: /client_id in the body differs/ })
})

t.test('Basic and client_secret together is invalid_request', async (t) => {
  fails(t, () => presentedCredentials(basic('c1', 's1'), form('client_secret=s1')),
    { status: 400, type: 'bad_request', error: 'invalid_request', description: /one client authentication method/ })
})

t.test('malformed Basic is invalid_client with a Basic challenge', async (t) => {
  const malformed = { status: 401, type: 'insufficient_credentials', error: 'invalid_client', description: /malformed Basic credentials/, basic: true }
  fails(t, () => presentedCredentials(`Basic ${Buffer.from('no-colon').toString('base64')}`, form()), malformed)
  fails(t, () => presentedCredentials('Basic ', form()), malformed)
  fails(t, () => presentedCredentials(basic('%ZZ', 'x'), form()), malformed)
  fails(t, () => presentedCredentials(basic('id', '%E0%A4%A'), form()), malformed)
})

t.test('body credentials', async (t) => {
  t.same(presentedCredentials('', form('client_id=c1&client_secret=s%201')), { clientId: 'c1', clientSecret: 's 1', via: 'body' })
  t.same(presentedCredentials('', form('client_id=public-app')), { clientId: 'public-app', clientSecret: undefined, via: 'body' }, 'a public client has no secret')
  t.same(presentedCredentials('Bearer abc', form('client_id=c1&client_secret=s')), { clientId: 'c1', clientSecret: 's', via: 'body' }, 'a non-Basic header is ignored')
})

t.test('no credentials at all', async (t) => {
  t.equal(presentedCredentials('', form()), undefined)
  t.equal(presentedCredentials('', form('client_id=')), undefined)
  t.equal(presentedCredentials('', form('grant_type=client_credentials&client_secret=s')), undefined)
})

t.test('invalidClient adds the challenge only for Basic', async (t) => {
  const b = invalidClient('nope', true)
  t.equal(b.status, 401)
  t.same(b.oauth, { error: 'invalid_client', error_description: 'nope' })
  t.same(b.headers, { 'www-authenticate': 'Basic realm="oauth2"' })
  t.same(invalidClient('nope', false).headers, {})
})

t.test("a server-generated secret is checked without reading the caller's address (only scrypt checks and failures' audit lines need it)", async (t) => {
  const record: ClientRecord = { client_id: 'gen', tenant: 'demo', secret: { alg: 'sha256', hash: sha256('s3cret') }, redirect_uris: [], scopes: [], grant_types: ['client_credentials'] }
  const clients = { find: (id: string) => (id === 'gen' ? record : undefined) } as unknown as Clients
  let asked = 0
  const source = (): string => { asked++; return '192.0.2.1' }
  const checks = {} as SecretChecks
  t.equal(await authenticateClient(clients, checks, { clientId: 'gen', clientSecret: 's3cret', via: 'basic' }, source), record)
  t.equal(asked, 0)
  const wrong = await authenticateClient(clients, checks, { clientId: 'gen', clientSecret: 'wrong', via: 'basic' }, source).catch((err: unknown) => err)
  t.equal((wrong as ApiError).status, 401, 'a wrong secret: 401')
  t.equal(asked, 1, 'read once a check failed, for its audit line (client_auth.failure)')
})

t.test('sha256 keeps the stored format: base64url of the digest (FIPS 180-2 "abc" vector), so hashes stored by earlier builds still match', async (t) => {
  t.equal(sha256('abc'), Buffer.from('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'hex').toString('base64url'))
  t.equal(sha256('été'), 'vQEMZBMr9crorqifZ2JRVyfc9opd0d6BPIf1ChbEUTw', 'UTF-8 text')
})
