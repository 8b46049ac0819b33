// The account page (/account) driven in a real headless Chromium, as a data
// subject: bob, a user of three tenants, signs in through the product's own
// sign-in page (code flow, PKCE, the built-in client), sees his consents in
// tenant demo, downloads his data, takes one consent back, erases the rest,
// and the shop's own reads show the data gone; another subject's data stays.
// Then the page is photographed at a phone's width (390 px) and a desktop's
// (1280 px): nothing wider than the window, every control inside it. And
// /account?idp=<id> passes the identity provider on to /authorize.
// Skipped, saying why, when Chromium is not installed.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { chromiumMissing, launchChromium, type Chromium } from '../helpers/chromium'
import { call, oauthServerForFile, type Json } from '../helpers/oauth'
import { getToken } from '../helpers/server'

// Three sign-ins, downloads and screenshots in a browser: on a loaded 2-core machine more than tap's default.
t.setTimeout(600_000)

const missing = chromiumMissing()
if (missing !== undefined) {
  t.plan(0, missing)
} else {
  const env = oauthServerForFile(t)
  let browser: Chromium | undefined
  let context: BrowserContext
  let enricher: Record<string, string>
  const G = (): string => `${env.server.url}/graph/v1/demo`
  const JSON_TYPE = { 'content-type': 'application/json' }

  t.before(async () => {
    enricher = { authorization: `Bearer ${await getToken(env.server.url)}` }
    browser = await launchChromium()
    context = browser.context
  })
  t.teardown(async () => {
    await browser?.close()
  })

  /** A consent of `subject` in demo, with a customer node written under it. */
  async function consentWithNode(subject: string, id: string, name: string): Promise<string> {
    const made = await call('POST', `${G()}/consents`, { ...enricher, ...JSON_TYPE }, JSON.stringify({ subject }))
    const ref = made.json<{ consentReference: string }>().consentReference
    const put = await call('PUT', `${G()}/nodes/core/customer/${id}`, { ...enricher, ...JSON_TYPE, 'consent-reference': ref }, JSON.stringify({ name }))
    if (put.status !== 204) throw new Error(`node ${id}: ${put.status} ${put.text}`)
    return ref
  }

  const node = (id: string): Promise<{ status: number; text: string; json<T>(): T }> => call('GET', `${G()}/nodes/core/customer/${id}`, enricher)

  /** A tab whose script errors and CSP refusals are collected. */
  async function tab(): Promise<{ page: Page; problems: string[] }> {
    const page = await context.newPage()
    page.setDefaultTimeout(90_000)
    const problems: string[] = []
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })
    page.on('pageerror', (e) => problems.push(e.message))
    return { page, problems }
  }

  /** Opens /account and signs in as bob (the form once; later tabs ride the session), then opens tenant demo. */
  async function signedIn(page: Page): Promise<void> {
    await page.goto(`${env.server.url}/account`)
    await page.click('#sign-in')
    await page.waitForSelector('#username, #tenants button')
    if (await page.isVisible('#username')) {
      await page.fill('#username', 'bob')
      await page.fill('#password', 'bob-password')
      await page.click('#submit')
    }
    await page.waitForSelector('#tenants button')
    await page.click('#tenants button:text-is("demo")')
    await page.waitForSelector('#tenant-name:text-is("demo")')
    await page.waitForSelector('#consents li, #empty:not([hidden])')
  }

  /** Each listed consent's reference and the state it shows. */
  async function states(page: Page): Promise<Record<string, string>> {
    const out: Record<string, string> = {}
    for (const li of await page.locator('#consents li').all()) out[(await li.getAttribute('data-ref')) ?? ''] = (await li.locator('.state').textContent()) ?? ''
    return out
  }

  t.test('a data subject\'s walk: sign in, list, download, take one back, erase, the data gone', async (t) => {
    const mine = [await consentWithNode('u-bob', 'bob-a', 'Bob Alpha'), await consentWithNode('u-bob', 'bob-b', 'Bob Beta')]
    const alices = await consentWithNode('alice', 'alice-1', 'Alice One')
    const { page, problems } = await tab()

    await page.goto(`${env.server.url}/account`)
    t.ok(await page.isVisible('#sign-in'), 'signed out: the sign-in button')
    await page.click('#sign-in')
    await page.waitForURL((u) => u.pathname === '/oauth2/v1/authorize')
    t.match(await page.locator('main').textContent(), /platform-account/, 'the product\'s own sign-in page, for the account page\'s client')
    const authorize = new URL(page.url()).searchParams
    t.equal(authorize.get('code_challenge_method'), 'S256')
    t.equal(authorize.get('redirect_uri'), `${env.server.url}/account`)
    await page.fill('#username', 'bob')
    await page.fill('#password', 'bob-password')
    await page.click('#submit')
    await page.waitForSelector('#tenants button')
    t.same(await page.locator('#tenants button').allTextContents(), ['acme', 'acme-eu', 'demo'], 'the user\'s tenants')
    t.match(await page.locator('#who').textContent(), /bob \(bob@example\.com\)/)
    await page.waitForSelector('#empty:not([hidden])')
    t.equal(await page.locator('#tenant-name').textContent(), 'acme', 'the first tenant opened: nothing stored there')
    t.equal(new URL(page.url()).search, '', 'no code left in the address')

    await page.click('#tenants button:text-is("demo")')
    await page.waitForSelector('#consents li')
    t.same(await states(page), { [mine[0]!]: 'Granted', [mine[1]!]: 'Granted' }, 'his two consents, not alice\'s')
    t.match(await page.locator(`li[data-ref="${mine[0]}"]`).textContent(), /Given todemo-enricher/, 'the client that made it')

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')])
    t.equal(download.suggestedFilename(), 'my-data-demo.json')
    const exported = JSON.parse(readFileSync((await download.path())!, 'utf8')) as Json[]
    const names = exported.filter((e) => e.kind === 'node').map((e) => (e.properties as Json).name).sort()
    t.same(names, ['Bob Alpha', 'Bob Beta'], 'his nodes, decrypted; nothing of alice\'s')
    t.same(exported.filter((e) => e.kind === 'consent').map((e) => e.consentReference).sort(), [...mine].sort())
    t.match(exported[0], { kind: 'subject', subject: 'u-bob', tenant: 'demo', account: { username: 'bob' } })

    await page.click(`li[data-ref="${mine[0]}"] button.revoke`)
    t.match(await page.locator('#confirm-text').textContent(), /cannot be brought back/, 'asked first')
    await page.click('#confirm-yes')
    await page.waitForSelector(`li[data-ref="${mine[0]}"] .state.revoked`)
    t.match(await page.locator('#status').textContent(), /Consent taken back/)
    t.match((await node('bob-a')).json<Json>(), { status: 403, type: 'consent_revoked' }, 'the shop reads it no more')
    t.match((await node('bob-b')).text, /"Bob Beta"/, 'the other consent\'s data stays')

    await page.click('#erase')
    t.match(await page.locator('#confirm-text').textContent(), /Erase everything about you at demo/)
    await page.click('#confirm-yes')
    await page.waitForSelector(`li[data-ref="${mine[1]}"] .state.revoked`)
    t.same(await states(page), { [mine[0]!]: 'Taken back', [mine[1]!]: 'Taken back' }, 'every consent taken back')
    t.equal(await page.locator('button.revoke').count(), 0, 'nothing left to take back')
    t.match((await node('bob-b')).json<Json>(), { status: 403, type: 'consent_revoked' }, 'erased')
    const list = await call('GET', `${G()}/nodes/core/customer`, enricher)
    const listed = list.json<Json[]>()
    t.equal(listed.filter((n) => n.LOCKED === true).length, 2, 'his nodes listed as locked, nothing readable')
    t.notOk(list.text.includes('Bob'), 'no plaintext of his left in the list')
    t.match((await node('alice-1')).text, /"Alice One"/, 'another subject\'s data untouched')
    t.equal((await call('GET', `${G()}/consents/${alices}`, enricher)).json<Json>().status, 'granted')

    const [again] = await Promise.all([page.waitForEvent('download'), page.click('#download')])
    const after = JSON.parse(readFileSync((await again.path())!, 'utf8')) as Json[]
    t.equal(after.filter((e) => e.kind === 'node').length, 0, 'nothing left to export')
    t.ok(after.filter((e) => e.kind === 'consent').every((e) => e.erased === true), 'the export says the consents were erased')

    const kept = JSON.parse(await page.evaluate('sessionStorage.getItem("platform-account")') as string) as { tokens: Record<string, { access: string }> }
    t.same(Object.keys(kept.tokens).sort(), ['', 'acme', 'demo'], 'the tab kept the identity token and one per tenant opened')
    await page.click('#sign-out')
    await page.waitForSelector('#sign-in')
    t.ok(await page.isVisible('#sign-in'), 'signed out')
    for (const [key, { access }] of Object.entries(kept.tokens)) {
      t.equal((await call('GET', `${env.issuer}/userinfo`, { authorization: `Bearer ${access}` })).status, 401, `the token of "${key}" is revoked`)
    }
    t.notOk((await context.cookies(env.issuer)).some((c) => c.name === 'platform_session'), 'the sign-in session ended')
    t.equal(await page.evaluate('sessionStorage.getItem("platform-account")'), null, 'nothing left in the tab')
    t.same(problems, [], 'no script error, nothing refused by the CSP')
    await page.close()
  })

  t.test('readable at a phone\'s width and a desktop\'s', async (t) => {
    const ref = await consentWithNode('u-bob', 'bob-c', 'Bob Gamma')
    await call('PUT', `${G()}/consents/${ref}/revokedProperties`, { ...enricher, ...JSON_TYPE }, JSON.stringify(['email', 'phone', 'a-long-property-name-for-wrapping']))
    const dir = t.testdir()
    for (const [width, height] of [[390, 844], [1280, 800]] as const) {
      const { page, problems } = await tab()
      await page.setViewportSize({ width, height })
      await signedIn(page)
      await page.waitForSelector(`li[data-ref="${ref}"] button.revoke`)
      const overflow = await page.evaluate('({ scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth })') as { scroll: number; inner: number }
      t.ok(overflow.scroll <= overflow.inner, `${width} px: nothing wider than the window (${overflow.scroll} <= ${overflow.inner})`)
      for (const selector of ['#sign-out', '#tenants button:text-is("demo")', '#download', '#erase', `li[data-ref="${ref}"] button.revoke`, `li[data-ref="${ref}"] .ref`]) {
        const box = await page.locator(selector).boundingBox()
        t.ok(box !== null && box.x >= 0 && box.x + box.width <= width && box.width > 0 && box.height > 0, `${width} px: ${selector} is shown inside the window`)
      }
      const fontPx = await page.evaluate('parseFloat(getComputedStyle(document.body).fontSize)') as number
      t.ok(fontPx >= 16, `${width} px: text at ${fontPx} px`)
      const file = join(dir, `account-${width}.png`)
      await page.screenshot({ path: file, fullPage: true })
      t.ok(readFileSync(file).length > 1000, `${width} px: screenshot saved (${file})`)
      t.same(problems, [], `${width} px: no script error`)
      await page.close()
    }
  })

  t.test('/account?idp=<id> signs in at that identity provider', async (t) => {
    const { page } = await tab()
    await page.goto(`${env.server.url}/account?idp=nowhere`)
    await page.waitForSelector('#sign-in')
    t.equal(new URL(page.url()).search, '', 'the address is cleaned')
    const [request] = await Promise.all([page.waitForRequest((r) => r.url().includes('/oauth2/v1/authorize')), page.click('#sign-in')])
    t.equal(new URL(request.url()).searchParams.get('platform_id_provider'), 'nowhere', 'passed on as platform_id_provider')
    await page.waitForSelector('#status.error')
    t.match(await page.locator('#status').textContent(), /Sign-in failed: .*nowhere/, 'an unknown provider: the refusal shown on the page')
    t.ok(await page.isVisible('#sign-in'), 'still signed out')
    await page.close()
  })
}
