// Anonymous floods do not exhaust the password checks:
// 400 parallel password grants for a non-existent user are mostly refused
// at once with 429 and Retry-After, while another client's scrypt-checked
// token request is served in well under the flood's length; the lock-out's
// message stays observable; failures from one address across accounts are
// limited, that address taken from X-Forwarded-For only behind a trusted
// proxy (--trust-proxy 127.0.0.1 here); a client that knows its secret is
// not locked out by someone guessing it.
import t from 'tap'
import { adminToken, basic, oauthServerForFile, postForm, UserAgent, type Json } from '../helpers/oauth'
import { call, type Answer } from '../helpers/client'
import { sleep } from '../../bench/wait'

const MESSAGE = 'Too many unsuccessful authentication attempts. Try again later.'
const env = oauthServerForFile(t, { args: ['--trust-proxy', '127.0.0.1'] })

const attempt = (username: string, password: string, headers: Record<string, string> = {}): Promise<Answer> =>
  postForm(`${env.issuer}/token`, { grant_type: 'password', username, password }, headers)

function limited(t: tap.Test, res: Answer, message: RegExp, what: string): void {
  t.equal(res.status, 429, what)
  const body = res.json<Json>()
  t.match(body, { status: 429, type: 'too_many_requests', error: 'temporarily_unavailable', message }, what)
  t.match(res.headers['retry-after'], /^[1-9]\d*$/, `${what}: Retry-After in seconds`)
}

t.test('a flood at one account: refused at once, another client is served promptly, the lock-out still answers', async (t) => {
  const created = await call('POST', `${env.issuer}/admin/clients`, { authorization: `Bearer ${await adminToken(env.issuer)}`, 'content-type': 'application/json' },
    JSON.stringify({ client_id: 'generated', tenant: 'demo', redirect_uris: [], scopes: ['platform.profile_graph_view'], grant_types: ['client_credentials'] }))
  const generated = basic('generated', created.json<{ client_secret: string }>().client_secret)
  const started = Date.now()
  const flood = Array.from({ length: 400 }, () => attempt('ghost-user', 'guess').then((res) => ({ res, ms: Date.now() - started })))
  await sleep(300)
  const before = Date.now()
  const legit = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('cc-only', 'cc-secret') })
  const took = Date.now() - before
  t.equal(legit.status, 200, 'a client with a scrypt-checked secret gets its token during the flood')
  t.ok(took < 5000, `and within seconds (${took} ms), not behind 400 checks`)
  const before2 = Date.now()
  const sha = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: generated })
  t.equal(sha.status, 200, 'a client with a server-generated (SHA-256) secret too')
  t.ok(Date.now() - before2 < 2000, `without going near the scrypt pool (${Date.now() - before2} ms)`)

  const answers = await Promise.all(flood)
  const refused = answers.filter((a) => a.res.status === 429)
  // A password was checked only where the answer is invalid_grant (a block, too_many_attempts, is answered without one).
  const checked = answers.filter((a) => a.res.status === 400 && a.res.json<Json>().type !== 'too_many_attempts').length
  t.comment(`flood: ${refused.length} refused with 429, ${checked} checked; the last answer after ${Math.max(...answers.map((a) => a.ms))} ms`)
  t.ok(checked <= 30, `at most the account's budget of 30 reached the pool (${checked})`)
  t.ok(refused.length > 0, 'the rest were refused at once')
  limited(t, refused[0]!.res, /for this account/, 'a refused attempt')
  t.ok(refused.every((a) => a.res.headers['retry-after'] !== undefined), 'every 429 says when to retry')
  t.ok(answers.every((a) => a.res.status === 429 || a.res.status === 400), 'the rest are normal failures; nothing 5xx')
  const last = await attempt('ghost-user', 'guess')
  t.equal(last.status, 400, 'the account is blocked now')
  t.equal(last.json<Json>().message, MESSAGE, 'with the exact lock-out message')
})

/** Resolves true as soon as one answer is a 429, false when all came without one. */
function anyRefused(answers: Promise<Answer>[]): Promise<boolean> {
  return new Promise((resolve) => {
    for (const p of answers) void p.then((a) => { if (a.status === 429) resolve(true) })
    void Promise.all(answers).then(() => resolve(false))
  })
}

t.test('failures from one address across accounts are limited; X-Forwarded-For counts only from a trusted proxy', async (t) => {
  // Half the attempts carry a hop the client forged to the left of the proxy's entry: the same source.
  const from = (i: number): Record<string, string> => ({ 'x-forwarded-for': i % 2 === 0 ? '198.51.100.7' : `203.0.113.${i}, 198.51.100.7` })
  const ua = new UserAgent(env.issuer)
  await ua.open({ client_id: 'web-app', response_type: 'code' })
  const all: Promise<Answer>[] = []
  let wave = 0
  // 30 at once at a fresh account; the source (60 failures) runs out before any account budget (30) does.
  for (; wave < 6; wave++) {
    const answers = Array.from({ length: 30 }, (_, i) => attempt(`spray-${wave}`, 'guess', from(i)))
    all.push(...answers)
    if (await anyRefused(answers)) break
  }
  // At once, while the budget is spent: more attempts (forged hops or not) and the sign-in form are refused; another address is not.
  const last = Array.from({ length: 8 }, (_, i) => attempt(`spray-${wave + 1}`, 'guess', from(i)))
  const signIn = new URLSearchParams({ client_id: 'web-app', response_type: 'code', username: 'bob', password: 'guess', csrf: ua.cookies.get('platform_csrf')! })
  const page = ua.send('POST', `${env.issuer}/authorize`, signIn, { origin: new URL(env.issuer).origin, 'x-forwarded-for': '198.51.100.7' })
  const other = attempt('alice', 'guess', { 'x-forwarded-for': '198.51.100.8' })
  const earlier = await Promise.all(all)
  const failures = earlier.filter((a) => a.status === 400).length
  t.ok(earlier.some((a) => a.status === 429), 'the address ran out of attempts')
  t.ok(failures >= 60, `${failures} failures were checked first (above the lock-out's 15)`)
  const lastAnswers = await Promise.all(last)
  const lastRefused = lastAnswers.filter((a) => a.status === 429)
  t.ok(lastRefused.length >= 7, `the attempts right after are refused (${lastRefused.length} of 8)`)
  limited(t, lastRefused[0]!, /from this address/, 'a sprayed attempt')
  t.ok(lastAnswers.filter((a, i) => i % 2 === 1 && a.status === 429).length >= 3, 'a forged left-most hop does not make a new source')
  const form = await page
  t.equal(form.status, 429, 'the sign-in form is limited the same way')
  t.match(form.headers['content-type'], /text\/html/)
  t.match(form.headers['retry-after'], /^[1-9]\d*$/)
  t.match(form.text, /from this address/)
  const another = await other
  t.equal(another.status, 400, 'another address behind the proxy is not limited')
  t.equal(another.json<Json>().error, 'invalid_grant')
  t.equal((await attempt('alice', 'alice-password')).status, 200, 'the proxy itself (no X-Forwarded-For) is its own source')
})

t.test('guesses at a client secret are limited; the client that knows it is not shut out', async (t) => {
  const wrong = await Promise.all(Array.from({ length: 40 }, () =>
    postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('cc-only', 'guess'), 'x-forwarded-for': '192.0.2.44' })))
  t.ok(wrong.some((a) => a.status === 429), 'guesses past the account budget are refused')
  limited(t, wrong.find((a) => a.status === 429)!, /for this account/, 'a guess')
  t.ok(wrong.every((a) => a.status === 429 || a.status === 401), 'the others fail as usual')
  const right = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('cc-only', 'cc-secret') })
  t.equal(right.status, 200, 'the secret verified before is recognised without a new check')
})
