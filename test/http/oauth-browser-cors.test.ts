// A browser app on another origin, as a user would run one: oidc-client-ts
// (its browser bundle) on a page served by a small HTTP server of the test,
// in headless Chromium (Debian's `chromium`, through playwright-core). It
// discovers the server, signs in with the code flow and PKCE as a public
// client, reads userinfo, calls the graph API (--cors-origins), refreshes,
// and signs out through end_session, revoking its tokens; every call crosses
// origins, so each needs CORS. A page on an origin nobody registered cannot
// read the answers. Skipped, saying why, when Chromium is not installed.
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type RequestListener, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { chromiumMissing, launchChromium, type Chromium } from '../helpers/chromium'
import type { BrowserContext, Page } from 'playwright-core'
import { adminToken, call, oauthServerForFile, VIEW } from '../helpers/oauth'
import { ROOT } from '../helpers/server'

const BUNDLE = join(ROOT, 'node_modules', 'oidc-client-ts', 'dist', 'browser', 'oidc-client-ts.min.js')
const CLIENT_ID = 'browser-spa'

/** What the pages leave on `window` for the test to read. */
interface PageState {
  manager: { signinRedirect(): Promise<void>; signinSilent(): Promise<SignedIn | null>; signoutRedirect(): Promise<void> }
  done: Promise<Outcome>
}
interface SignedIn { access_token: string; refresh_token?: string; id_token?: string; profile: Record<string, unknown>; scope?: string }
type Outcome = { ok: true; user: SignedIn } | { ok: false; error: string }

async function listen(handler: RequestListener): Promise<{ server: HttpServer; origin: string }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const missing = chromiumMissing()
if (missing !== undefined) {
  t.plan(0, missing)
} else if (!existsSync(BUNDLE)) {
  t.plan(0, `the oidc-client-ts browser bundle is missing at ${BUNDLE} (npm ci installs it)`)
} else {
  // The graph API must allow the app's origin, known once its server listens: it starts first, and the args are filled then.
  const app = { server: undefined as HttpServer | undefined, origin: '' }
  const serverArgs: string[] = []
  t.before(async () => {
    Object.assign(app, await listen((req, res) => appPage(req.url ?? '/', res)))
    serverArgs.push('--cors-origins', app.origin)
  })
  const env = oauthServerForFile(t, { args: serverArgs })
  let stranger: { server: HttpServer; origin: string }
  let context: BrowserContext
  let browser: Chromium | undefined

  /** The app's pages: one script that builds the UserManager; the callback pages finish what the server sent back. */
  function appPage(url: string, res: import('node:http').ServerResponse): void {
    if (url === '/oidc-client-ts.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(BUNDLE))
      return
    }
    const path = url.split('?')[0]
    const finish = path === '/callback' ? 'manager.signinRedirectCallback().then((user) => ({ ok: true, user }))'
      : path === '/signed-out' ? 'manager.signoutRedirectCallback().then(() => ({ ok: true, user: null }))'
        : 'Promise.resolve({ ok: true, user: null })'
    const settings = {
      authority: env.issuer, client_id: CLIENT_ID, redirect_uri: `${app.origin}/callback`, post_logout_redirect_uri: `${app.origin}/signed-out`,
      response_type: 'code', scope: `openid ${VIEW}`, loadUserInfo: true, automaticSilentRenew: false, revokeTokensOnSignout: true,
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><meta charset="utf-8"><title>app</title>
<script src="/oidc-client-ts.js"></script>
<script>
window.manager = new oidc.UserManager(${JSON.stringify(settings)});
window.done = ${finish}.catch((err) => ({ ok: false, error: String(err && err.message || err) }));
</script><p>the app</p>`)
  }

  t.before(async () => {
    stranger = await listen((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>stranger</title>'))
    const registered = await call('POST', `${env.issuer}/admin/clients`, {
      authorization: `Bearer ${await adminToken(env.issuer)}`, 'content-type': 'application/json',
    }, JSON.stringify({
      client_id: CLIENT_ID, tenant: 'demo', public: true, redirect_uris: [`${app.origin}/callback`, `${app.origin}/signed-out`],
      scopes: [VIEW], grant_types: ['authorization_code', 'refresh_token'],
    }))
    if (registered.status !== 201) throw new Error(`client registration failed: ${registered.text}`)
    browser = await launchChromium()
    context = browser.context
  })
  t.teardown(async () => {
    await browser?.close()
    await Promise.all([app.server, stranger?.server].map((s) => new Promise((resolve) => (s === undefined ? resolve(undefined) : s.close(resolve)))))
  })

  const outcome = (page: Page): Promise<Outcome> => page.evaluate(() => (globalThis as unknown as PageState).done)

  t.test('sign in, userinfo, graph call, refresh and sign out from another origin', async (t) => {
    const page = await context.newPage()
    const problems: string[] = []
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })
    await page.goto(`${app.origin}/`)
    t.same(await outcome(page), { ok: true, user: null }, 'the bundle loaded')

    // Discovery is fetched cross-origin before the browser leaves for /authorize.
    await Promise.all([page.waitForURL((u) => u.href.startsWith(`${env.issuer}/authorize`)), page.evaluate(() => { void (globalThis as unknown as PageState).manager.signinRedirect() })])
    t.equal(await page.title(), 'Sign in')
    await page.fill('#username', 'alice')
    await page.fill('#password', 'alice-password')
    await Promise.all([page.waitForURL((u) => u.href.startsWith(`${app.origin}/callback`)), page.click('#submit')])
    const signedIn = await outcome(page)
    if (!signedIn.ok) throw new Error(`sign-in failed in the page: ${signedIn.error}`)
    const user = signedIn.user
    t.equal(user.profile.sub, 'alice')
    t.equal(user.profile.email, 'alice@example.com', 'userinfo was read across origins')
    t.type(user.refresh_token, 'string', 'a refresh token for the public client')

    const graph = await page.evaluate(async ([url, token]) => {
      const res = await fetch(url!, { headers: { authorization: `Bearer ${token}` } })
      return { status: res.status, body: await res.text() }
    }, [`${new URL(env.issuer).origin}/graph/v1/demo/nodes/person/p1`, user.access_token])
    t.equal(graph.status, 200, 'the graph API answers the app (--cors-origins)')

    const refreshed = await page.evaluate(() => (globalThis as unknown as PageState).manager.signinSilent())
    t.ok(refreshed, 'signinSilent used the refresh token')
    t.not(refreshed?.access_token, user.access_token, 'a new access token')
    t.equal(refreshed?.profile.sub, 'alice')

    await Promise.all([page.waitForURL((u) => u.href.startsWith(`${app.origin}/signed-out`)), page.evaluate(() => { void (globalThis as unknown as PageState).manager.signoutRedirect() })])
    t.same(await outcome(page), { ok: true, user: null }, 'the sign-out callback')
    const session = (await context.cookies(env.issuer)).find((c) => c.name === 'platform_session')
    t.equal(session, undefined, 'the session cookie is cleared')
    const info = await call('GET', `${env.issuer}/tokeninfo`, { authorization: `Bearer ${refreshed!.access_token}` })
    t.equal(info.status, 401, 'the tokens were revoked at sign-out')
    t.same(problems, [], 'no console errors (no CORS failure)')
    await page.close()
  })

  t.test('a page of an origin no client registered cannot read the answers', async (t) => {
    const page = await context.newPage()
    await page.goto(`${stranger.origin}/`)
    const results = await page.evaluate(async (issuer) => {
      const attempt = (url: string, init?: RequestInit): Promise<string> => fetch(url, init).then((r) => `status ${r.status}`, (err: Error) => err.name)
      return {
        discovery: await attempt(`${issuer}/.well-known/openid-configuration`),
        token: await attempt(`${issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=x&client_id=browser-spa' }),
        userinfo: await attempt(`${issuer}/userinfo`, { headers: { authorization: 'Bearer x' } }),
        graph: await attempt(`${new URL(issuer).origin}/graph/v1/demo/nodes/person/p1`, { headers: { authorization: 'Bearer x' } }),
      }
    }, env.issuer)
    t.same(results, { discovery: 'status 200', token: 'TypeError', userinfo: 'TypeError', graph: 'TypeError' })
    await page.close()
  })
}
