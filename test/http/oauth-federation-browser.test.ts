// Custom identity providers in a real headless Chromium (through
// playwright-core): /authorize with platform_id_provider leads to the
// upstream's own pages (oidc-provider from npm), the user signs in and
// consents there, and lands on the client's redirect URI with a code; the
// first time provisions a user, later sign-ins reuse the link; an abort
// upstream reaches the client as access_denied. Skipped, saying why, when
// Chromium is not installed.
import t, { type Test } from 'tap'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromiumMissing, launchChromium, type Chromium } from '../helpers/chromium'
import type { BrowserContext, Page } from 'playwright-core'
import { adminToken, basic, call, oauthServerForFile, redirectParams, tokenOk } from '../helpers/oauth'
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
