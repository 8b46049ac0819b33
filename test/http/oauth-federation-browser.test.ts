// Custom identity providers in a real headless Chromium (through
// playwright-core): /authorize with platform_id_provider leads to the
// upstream's own pages (oidc-provider from npm), the user signs in and
// consents there, and lands on the client's redirect URI with a code; the
// first time provisions a user, later sign-ins reuse the link; an abort
// upstream reaches the client as access_denied. Then this server as the
// upstream of a second instance (another port: another origin), whose
// client is on a third origin (localhost): the sign-in page's POST
// redirects to the second instance, which redirects on to its client, and
// the browser must get there (the sign-in page's CSP must not block that
// chain). Skipped, saying why, when Chromium is not installed.
import t, { type Test } from 'tap'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromiumMissing, launchChromium, type Chromium } from '../helpers/chromium'
import type { BrowserContext, Page } from 'playwright-core'
import { adminToken, basic, call, oauthServerForFile, redirectParams, startOAuthServer, tokenOk, type Json } from '../helpers/oauth'
import { removeDir } from '../helpers/server'
import { startUpstreamOp, type UpstreamOp } from '../helpers/upstream-op'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.plan(0, missing)
} else {
  const env = oauthServerForFile(t)
  let op: UpstreamOp
  let callbackServer: HttpServer
  let CALLBACK: string
  let clientAuth: { authorization: string }
  let browser: Chromium | undefined
  let context: BrowserContext

  t.before(async () => {
    callbackServer = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>') })
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve))
    CALLBACK = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`
    op = await startUpstreamOp([`${env.issuer}/idp/corp/callback`], 'upstream-secret')
    const admin = { authorization: `Bearer ${await adminToken(env.issuer)}`, 'content-type': 'application/json' }
    const client = await call('POST', `${env.issuer}/admin/clients`, admin,
      JSON.stringify({ client_id: 'fed-app', tenant: 'demo', redirect_uris: [CALLBACK], scopes: ['platform.profile_graph_view'], grant_types: ['authorization_code'] }))
    clientAuth = { authorization: basic('fed-app', client.json<{ client_secret: string }>().client_secret) }
    const idp = await call('PUT', `${env.issuer}/admin/identity-providers/corp`, admin, JSON.stringify({
      issuer: op.issuer, client_id: 'platform', client_secret: 'upstream-secret', provisioning: { tenants: { demo: ['graph-reader'] } },
    }))
    if (idp.status !== 201) throw new Error(`PUT corp: ${idp.status} ${idp.text}`)
    browser = await launchChromium()
    context = browser.context
  })
  t.teardown(async () => {
    await browser?.close()
    await op?.close()
    await new Promise((resolve) => callbackServer.close(resolve))
  })

  const authorizeUrl = (state: string): string => `${env.issuer}/authorize?${new URLSearchParams({
    client_id: 'fed-app', response_type: 'code', scope: 'openid', state, redirect_uri: CALLBACK, platform_id_provider: 'corp',
  }).toString()}`

  /** Signs in upstream as `login` and consents; returns where the browser landed. */
  async function upstreamSignIn(t: Test, page: Page, state: string, login: string): Promise<URL> {
    await page.goto(authorizeUrl(state))
    t.ok(page.url().startsWith(op.issuer), 'the browser is at the upstream provider')
    await page.fill('input[name="login"]', login)
    await page.fill('input[name="password"]', 'any-password')
    await page.click('button[type="submit"]')
    await page.waitForSelector('button[type="submit"]')
    await Promise.all([page.waitForURL((u) => u.href.startsWith(CALLBACK)), page.click('button[type="submit"]')])
    return new URL(page.url())
  }

  async function subOf(landed: URL): Promise<string> {
    const code = landed.searchParams.get('code')!
    const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, clientAuth)
    return (JSON.parse(Buffer.from(tokens.id_token!.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string }).sub
  }

  t.test('a browser signs in upstream, is provisioned, and signs in again through the same link', async (t) => {
    const page = await context.newPage()
    const first = await upstreamSignIn(t, page, 'b-1', 'erin')
    t.equal(first.searchParams.get('state'), 'b-1')
    const sub = await subOf(first)
    const cookies = await context.cookies(env.issuer)
    t.ok(cookies.some((c) => c.name === 'platform_session'), 'our session cookie is set')

    // Another browser (no session of ours, nor upstream): the upstream asks again, the link gives the same user.
    await context.clearCookies()
    const again = await upstreamSignIn(t, page, 'b-2', 'erin')
    t.equal(await subOf(again), sub)
    await page.close()
  })

  t.test('a second instance with this one as its upstream: the browser ends at its client on a third origin', async (t) => {
    // This server (A) is the upstream of B; B's client is on a third origin.
    const b = await startOAuthServer()
    t.teardown(async () => {
      await b.stop()
      removeDir(b.dataDir)
    })
    const client = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>shop</title>') })
    await new Promise<void>((resolve) => client.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise((resolve) => client.close(resolve)))
    const SHOP = `http://localhost:${(client.address() as AddressInfo).port}/callback`

    const json = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' })
    const adminA = json(await adminToken(env.issuer))
    const adminB = json(await adminToken(b.issuer))
    const post = async (url: string, headers: Record<string, string>, body: Json, method: 'POST' | 'PUT' = 'POST'): Promise<Json> => {
      const res = await call(method, url, headers, JSON.stringify(body))
      if (res.status !== 201) throw new Error(`${method} ${url}: ${res.status} ${res.text}`)
      return res.json<Json>()
    }
    // At A: B's client, and two users (the second with a verified e-mail B has a local user for).
    const broker = await post(`${env.issuer}/admin/clients`, adminA, {
      client_id: 'broker', tenant: 'demo', grant_types: ['authorization_code'], redirect_uris: ['main', 'main-email'].map((id) => `${b.issuer}/idp/${id}/callback`),
    })
    await post(`${env.issuer}/admin/users`, adminA, { username: 'fed-erin', password: 'fed-erin-password', email: 'erin@a.example', tenants: { demo: ['graph-reader'] } })
    await post(`${env.issuer}/admin/users`, adminA, { username: 'gina', password: 'gina-password', email: 'gina@b.example', email_verified: true, tenants: { demo: ['graph-reader'] } })
    // At B: A as two providers (provisioning, and linking by verified e-mail), its client, and the local user to link.
    const upstream = { issuer: env.issuer, client_id: 'broker', client_secret: broker.client_secret }
    await post(`${b.issuer}/admin/identity-providers/main`, adminB, { ...upstream, provisioning: { tenants: { demo: ['graph-reader'] } } }, 'PUT')
    await post(`${b.issuer}/admin/identity-providers/main-email`, adminB, { ...upstream, link_by_verified_email: true }, 'PUT')
    const shop = await post(`${b.issuer}/admin/clients`, adminB, { client_id: 'shop', tenant: 'demo', grant_types: ['authorization_code'], redirect_uris: [SHOP] })
    await post(`${b.issuer}/admin/users`, adminB, { username: 'local-gina', password: 'local-gina-password', email: 'gina@b.example', tenants: { demo: ['graph-reader'] } })

    /** Through A's sign-in page as `username`; returns B's user (the ID token's sub) of the code the shop got. */
    async function signIn(provider: string, username: string, state: string): Promise<string> {
      await context.clearCookies()
      const page = await context.newPage()
      await page.goto(`${b.issuer}/authorize?${new URLSearchParams({
        client_id: 'shop', response_type: 'code', scope: 'openid', state, redirect_uri: SHOP, platform_id_provider: provider,
      }).toString()}`)
      t.ok(page.url().startsWith(`${env.issuer}/authorize`), "the browser is at A's sign-in page")
      await page.fill('#username', username)
      await page.fill('#password', `${username}-password`)
      await Promise.all([page.waitForURL((u) => u.href.startsWith(SHOP)), page.click('#submit')])
      const { query } = redirectParams(page.url())
      await page.close()
      t.equal(query.get('state'), state, 'at the shop, on the third origin')
      const code = query.get('code')
      if (code === null) throw new Error(`no code: ${query.toString()}`)
      const tokens = await tokenOk(b.issuer, { grant_type: 'authorization_code', code, redirect_uri: SHOP }, { authorization: basic('shop', String(shop.client_secret)) })
      return (JSON.parse(Buffer.from(tokens.id_token!.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string }).sub
    }

    // A's ID token names the user (preferred_username): B provisions one with that username and A's e-mail.
    const provisioned = await signIn('main', 'fed-erin', 'shop-1')
    t.match((await call('GET', `${b.issuer}/admin/users/${provisioned}`, adminB)).json<Json>(), { username: 'fed-erin', email: 'erin@a.example', email_verified: false })
    // A says gina's e-mail is verified (email_verified): B links its local user with that e-mail.
    t.equal(await signIn('main-email', 'gina', 'shop-2'), 'local-gina')
  })

  t.test('aborting at the upstream brings access_denied to the client', async (t) => {
    await context.clearCookies()
    const page = await context.newPage()
    await page.goto(authorizeUrl('b-3'))
    await Promise.all([page.waitForURL((u) => u.href.startsWith(CALLBACK)), page.click('a[href$="/abort"]')])
    const { query } = redirectParams(page.url())
    t.equal(query.get('error'), 'access_denied')
    t.match(query.get('error_description'), /identity provider "corp" answered access_denied/)
    t.equal(query.get('state'), 'b-3')
    await page.close()
  })
}
