// Long ids and names at the authorization service: a user whose id has 20
// or more characters lists and deletes their refresh tokens; a username,
// client_id or admin path id longer than any stored one can be is a 400
// that says so (never a 500), on every route that would look it up.
import t from 'tap'
import {
  adminToken, basic, call, codeFor, hiddenFields, oauthServerForFile, postForm, tokenOk, UserAgent, WEB_AUTH, type Json,
} from '../helpers/oauth'
import { MAX_NAME_CHARS } from '../../src/auth/helpers/name-limit'

const env = oauthServerForFile(t)
let admin: string
t.before(async () => {
  admin = await adminToken(env.issuer)
})

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): ReturnType<typeof call> =>
  call(method, `${env.issuer}/admin/${path}`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body === undefined ? undefined : JSON.stringify(body))

t.test('a user with a long id lists and deletes their refresh tokens', async (t) => {
  for (const id of ['someone.with.a.long.id@example.com', `u${'x'.repeat(MAX_NAME_CHARS - 1)}`]) {
    const username = `${id.slice(0, 100)}-name`
    const created = await api('POST', 'users', { id, username, password: 'long-id-password', email: 'long@example.com', tenants: { demo: ['graph-reader'] } })
    t.equal(created.status, 201, created.text)
    const tokens = []
    for (let i = 0; i < 2; i++) {
      const { code } = await codeFor(env.issuer, { client_id: 'web-app' }, username, 'long-id-password')
      tokens.push(await tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH))
    }
    const auth = { authorization: `Bearer ${tokens[0]!.access_token}` }
    const listed = await call('GET', `${env.issuer}/refreshtokens`, auth)
    t.equal(listed.status, 200)
    t.equal(listed.json<Json[]>().length, 2, `${id.length} characters: both refresh tokens listed`)
    t.equal((await call('DELETE', `${env.issuer}/refreshtokens`, auth)).status, 204)
    for (const tk of tokens) {
      const refreshed = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: tk.refresh_token! }, WEB_AUTH)
      t.equal(refreshed.status, 400, 'the delete ended it')
    }
  }
})

t.test('a username past the limit is a 400 on the password grant and the sign-in form', async (t) => {
  for (const username of ['u'.repeat(MAX_NAME_CHARS + 1), 'é'.repeat(1000), 'x'.repeat(1980), '\u0000'.repeat(3000)]) {
    const res = await postForm(`${env.issuer}/token`, { grant_type: 'password', username, password: 'whatever-password' })
    t.equal(res.status, 400)
    t.match(res.json<Json>(), { error: 'invalid_request', error_description: `username is longer than ${MAX_NAME_CHARS} characters` })
  }
  const unknown = await postForm(`${env.issuer}/token`, { grant_type: 'password', username: 'u'.repeat(MAX_NAME_CHARS), password: 'whatever-password' })
  t.match(unknown.json<Json>(), { error: 'invalid_grant' }, 'at the limit: an ordinary unknown user')

  const ua = new UserAgent(env.issuer)
  const page = await ua.open({ client_id: 'web-app', response_type: 'code', scope: 'openid' })
  t.equal(page.status, 200)
  t.match(page.text, `maxlength="${MAX_NAME_CHARS}"`)
  const html = await ua.submit(page, 'x'.repeat(1980), 'whatever-password')
  t.equal(html.status, 400)
  t.match(html.text, `The username is longer than ${MAX_NAME_CHARS} characters.`)
  t.notMatch(html.text, 'x'.repeat(200), 'not echoed back')
  const again = await ua.open({ client_id: 'web-app', response_type: 'code', scope: 'openid' })
  const form = new URLSearchParams({ ...hiddenFields(again.text), username: 'x'.repeat(1980), password: 'whatever-password' })
  const json = await ua.send('POST', `${env.issuer}/authorize`, form, { origin: new URL(env.issuer).origin, accept: 'application/json' })
  t.equal(json.status, 400)
  t.match(json.json<Json>(), { type: 'bad_request', message: `the username is longer than ${MAX_NAME_CHARS} characters` })
})

t.test('a client_id past the limit is a 400 wherever a client is looked up', async (t) => {
  const long = 'c'.repeat(2000)
  const authorize = await call('GET', `${env.issuer}/authorize?${new URLSearchParams({ client_id: long, response_type: 'code' })}`)
  t.equal(authorize.status, 400)
  t.match(authorize.json<Json>(), { error: 'invalid_request', error_description: `client_id is longer than ${MAX_NAME_CHARS} characters` })
  const viaBasic = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic(long, 'secret') })
  t.equal(viaBasic.status, 400)
  t.match(viaBasic.json<Json>(), { error: 'invalid_request' })
  const viaBody = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials', client_id: long, client_secret: 'secret' })
  t.equal(viaBody.status, 400)
  const publicClient = await postForm(`${env.issuer}/token`, { grant_type: 'password', client_id: long, username: 'alice', password: 'alice-password' })
  t.equal(publicClient.status, 400)
  const revoke = await postForm(`${env.issuer}/revoke`, { token: 'x', client_id: long })
  t.equal(revoke.status, 400)
  const endSession = await call('GET', `${env.issuer}/end_session?client_id=${long}`)
  t.equal(endSession.status, 400)
})

t.test('admin path ids past the limit are a 400; at the limit, an unknown one is a 404', async (t) => {
  const long = 'i'.repeat(2000)
  for (const path of ['users', 'clients', 'tenants', 'packages', 'subscriptions', 'roles']) {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await api(method, `${path}/${long}`)
      t.equal(res.status, 400, `${method} ${path}`)
      t.match(res.json<Json>(), { type: 'bad_request', message: /longer than 128 characters/ })
    }
    t.equal((await api('GET', `${path}/${'i'.repeat(MAX_NAME_CHARS)}`)).status, 404, `${path} at the limit`)
  }
  t.equal((await api('PUT', `users/${long}`, { email: 'a@example.com' })).status, 400)
  t.equal((await api('POST', `clients/${long}/secret`)).status, 400)
})
