// The sign-in page driven in a real headless Chromium (Debian's `chromium`
// package, through playwright-core): open /authorize, fill the form, land on
// the client's redirect URI (a small HTTP server of the test, registered
// through the admin API) with a code, exchange it; then single sign-on, a
// wrong password, CSRF, and the CSP letting the redirect through. Skipped,
// saying why, when Chromium is not installed.
import t from 'tap'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromiumMissing, launchChromium, type Chromium } from '../helpers/chromium'
import type { BrowserContext, Page } from 'playwright-core'
import { adminToken, basic, call, oauthServerForFile, redirectParams, tokenOk } from '../helpers/oauth'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.plan(0, missing)
} else {
  const env = oauthServerForFile(t)
  let context: BrowserContext
  let browser: Chromium | undefined
  /** Every request to the client's redirect URI (not the favicon). */
  const landed: string[] = []
  let callbackServer: HttpServer
  let CALLBACK: string
  let clientAuth: { authorization: string }

  t.before(async () => {
    callbackServer = createServer((req, res) => {
      if (req.url?.startsWith('/callback') === true) landed.push(`${CALLBACK.slice(0, CALLBACK.indexOf('/callback'))}${req.url}`)
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title><p>back at the client</p>')
    })
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve))
    CALLBACK = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`
    const registered = await call('POST', `${env.issuer}/admin/clients`, {
      authorization: `Bearer ${await adminToken(env.issuer)}`, 'content-type': 'application/json',
    }, JSON.stringify({ client_id: 'browser-app', tenant: 'demo', redirect_uris: [CALLBACK], scopes: ['platform.profile_graph_view'], grant_types: ['authorization_code'] }))
    clientAuth = { authorization: basic('browser-app', registered.json<{ client_secret: string }>().client_secret) }

    browser = await launchChromium()
    context = browser.context
  })
  t.teardown(async () => {
    await browser?.close()
    await new Promise((resolve) => callbackServer.close(resolve))
  })

  const authorizeUrl = (state: string): string =>
    `${env.issuer}/authorize?${new URLSearchParams({ client_id: 'browser-app', response_type: 'code', scope: 'openid', state, redirect_uri: CALLBACK }).toString()}`

  async function landing(page: Page, action: () => Promise<unknown>): Promise<URL> {
    const before = landed.length
    await Promise.all([page.waitForURL((u) => u.href.startsWith(CALLBACK)), action()])
    t.equal(landed.length, before + 1, 'one navigation to the redirect URI')
    return new URL(landed[landed.length - 1]!)
  }

  t.test('sign in through the page, land on the redirect with a code, exchange it', async (t) => {
    const page = await context.newPage()
    const problems: string[] = []
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })
    await page.goto(authorizeUrl('browser-1'))
    t.equal(await page.title(), 'Sign in')
    t.equal(await page.locator('h1').textContent(), 'Sign in')
    t.match(await page.locator('main').textContent(), /browser-app/)

    await page.fill('#username', 'alice')
    await page.fill('#password', 'not-her-password')
    await page.click('#submit')
    await page.waitForSelector('#error')
    t.equal(await page.locator('#error').textContent(), 'Invalid username or password.')
    t.equal(await page.inputValue('#username'), 'alice', 'the username is kept')

    t.notOk(problems.some((p) => /Content Security Policy/.test(p)), 'the inline style is allowed by the CSP')
    problems.length = 0 // the 401 of the wrong password is logged as a failed load
    await page.fill('#password', 'alice-password')
    const url = await landing(page, () => page.click('#submit'))
    const { query } = redirectParams(url.href)
    t.equal(query.get('state'), 'browser-1')
    t.equal(query.get('iss'), env.issuer)
    const code = query.get('code')!
    t.match(code, /^[A-Za-z0-9_-]{43}$/)
    t.same(problems, [], 'no console errors (the CSP allowed the inline style and the redirect)')

    const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, clientAuth)
    t.type(tokens.id_token, 'string')
    t.type(tokens.refresh_token, 'string')

    const cookies = await context.cookies(env.issuer)
    const session = cookies.find((c) => c.name === 'platform_session')
    t.ok(session, 'a session cookie')
    t.equal(session?.httpOnly, true)
    t.equal(session?.sameSite, 'Lax')
    t.equal(session?.path, '/oauth2/v1')
    await page.close()
  })

  t.test('single sign-on: the next authorization needs no form', async (t) => {
    const page = await context.newPage()
    const url = await landing(page, () => page.goto(authorizeUrl('browser-2')))
    t.equal(url.searchParams.get('state'), 'browser-2')
    const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code: url.searchParams.get('code')!, redirect_uri: CALLBACK }, clientAuth)
    t.type(tokens.access_token, 'string')
    await page.close()
  })

  t.test('a form from another site is refused (CSRF)', async (t) => {
    await context.clearCookies()
    const page = await context.newPage()
    await page.goto(authorizeUrl('browser-3'))
    await context.clearCookies() // as if the form had been served to someone else
    await page.fill('#username', 'alice')
    await page.fill('#password', 'alice-password')
    const [response] = await Promise.all([page.waitForNavigation(), page.click('#submit')])
    t.equal(response?.status(), 403)
    t.match(await page.locator('main').textContent(), /sign-in form expired/)
    await page.close()
  })
}
