// Brute-force protection over HTTP with the server's clock moved through a
// clock-offset file (no real waiting): 15 failures within 15 minutes (each
// failure restarting the interval) block the account for 15 minutes from the
// 15th failure; every attempt during the block gets 400 with the exact
// message, on the password grant and on the sign-in form; attempts during
// the block and a password change do not move its end.
import t from 'tap'
import {
  adminToken, call, oauthServerForFile, postForm, UserAgent, type Json,
} from '../helpers/oauth'

const MESSAGE = 'Too many unsuccessful authentication attempts. Try again later.'
const MINUTE = 60_000

const env = oauthServerForFile(t)
let offset = 0
/** Moves the server clock to `ms` after the start of the test file (forward only). */
const at = (ms: number): void => {
  offset = ms
  env.server.setClockOffset(offset)
}

const attempt = (username: string, password: string): Promise<{ status: number; json: <T>() => T }> =>
  postForm(`${env.issuer}/token`, { grant_type: 'password', username, password })

/** `times` failed attempts, sent together (the count is transactional), each answered as a normal failure. */
async function fail(t: tap.Test, username: string, times: number): Promise<void> {
  const answers = await Promise.all(Array.from({ length: times }, () => attempt(username, 'wrong-password')))
  answers.forEach((res, i) => {
    t.equal(res.status, 400)
    t.equal(res.json<Json>().error, 'invalid_grant', `failure ${i + 1} is a normal failure`)
  })
}

function blocked(t: tap.Test, res: { status: number; json: <T>() => T }, what: string): void {
  t.equal(res.status, 400, what)
  const body = res.json<Json>()
  t.equal(body.message, MESSAGE, `${what}: the exact message`)
  t.equal(body.type, 'too_many_attempts', what)
  t.equal(body.status, 400)
}

t.test('password grant: 15 failures block for 15 minutes from the 15th, even the right password', async (t) => {
  at(0)
  await fail(t, 'locked1', 14)
  t.equal((await attempt('locked1', 'locked1-password')).status, 200, 'after 14 failures the right password works')
  await fail(t, 'locked1', 14)
  at(5 * MINUTE)
  await fail(t, 'locked1', 1) // the 15th failure, at +5 min
  blocked(t, await attempt('locked1', 'locked1-password'), 'the right password during the block')
  blocked(t, await attempt('locked1', 'wrong-password'), 'a wrong password during the block')
  at(12 * MINUTE)
  blocked(t, await attempt('locked1', 'locked1-password'), 'an attempt during the block (does not extend it)')
  at(20 * MINUTE - 10_000)
  blocked(t, await attempt('locked1', 'locked1-password'), 'ten seconds before the end')
  at(20 * MINUTE)
  t.equal((await attempt('locked1', 'locked1-password')).status, 200, '15 minutes after the 15th failure the account is active')
})

t.test('each failure restarts the 15-minute interval; a 15-minute pause resets the count', async (t) => {
  at(30 * MINUTE)
  let time = 30 * MINUTE
  for (let i = 0; i < 14; i++) {
    at(time)
    await fail(t, 'locked2', 1)
    time += 14 * MINUTE
  }
  at(time)
  await fail(t, 'locked2', 1) // 15th failure, each 14 minutes after the previous one
  blocked(t, await attempt('locked2', 'locked2-password'), 'blocked after 15 failures spread over 3 hours')
  time += 15 * MINUTE
  at(time)
  t.equal((await attempt('locked2', 'locked2-password')).status, 200)

  await fail(t, 'locked2', 14)
  time += 15 * MINUTE
  at(time)
  await fail(t, 'locked2', 1)
  t.equal((await attempt('locked2', 'locked2-password')).status, 200, 'a failure 15 minutes after the previous one starts a new count')
  at(time + 16 * MINUTE)
})

t.test('the sign-in form: the same count, the exact message on a 400 page; a password change does not end the block', async (t) => {
  const start = offset + 60 * MINUTE
  at(start)
  const ua = new UserAgent(env.issuer)
  const page = await ua.open({ client_id: 'web-app', response_type: 'code' })
  for (let i = 0; i < 10; i++) {
    const res = await ua.submit(page, 'locked3', 'wrong-password')
    t.equal(res.status, 401, `form failure ${i + 1}`)
    t.match(res.text, /Invalid username or password/)
  }
  await fail(t, 'locked3', 5) // failures 11..15 through the password grant count for the same account
  const res = await ua.submit(page, 'locked3', 'locked3-password')
  t.equal(res.status, 400)
  t.match(res.headers['content-type'], /text\/html/)
  t.ok(res.text.includes(MESSAGE), 'the exact message on the page')
  t.equal(res.headers.location, undefined, 'no code')
  const program = await ua.send('POST', `${env.issuer}/authorize`, new URLSearchParams({
    client_id: 'web-app', response_type: 'code', username: 'locked3', password: 'locked3-password', csrf: ua.cookies.get('platform_csrf')!,
  }), { accept: 'application/json', origin: new URL(env.issuer).origin })
  blocked(t, program, 'the form posted by a program gets the JSON error body')

  const admin = await adminToken(env.issuer)
  const change = await call('PUT', `${env.issuer}/admin/users/locked3`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, JSON.stringify({ password: 'a-new-password' }))
  t.equal(change.status, 200)
  blocked(t, await attempt('locked3', 'a-new-password'), 'the new password during the block')
  at(start + 15 * MINUTE)
  t.equal((await attempt('locked3', 'a-new-password')).status, 200, 'the block ends on time')
})

t.test('unknown usernames are counted too, so answers do not reveal accounts', async (t) => {
  await fail(t, 'no-such-user', 15)
  blocked(t, await attempt('no-such-user', 'whatever'), 'an unknown username is blocked the same way')
})
