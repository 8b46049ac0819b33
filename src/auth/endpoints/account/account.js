// The account page's script (served inline by page.ts under a CSP nonce; no
// framework, no other origin). Sign-in: the authorization code flow with PKCE
// (S256) as the built-in public client "platform-account", first for the
// user's identity (openid, no tenant: /userinfo names the user's tenants),
// then one token per tenant (platform.tenant=<t>, prompt=none: the session
// of the sign-in answers without a prompt, also when a token expires).
// Tokens live in sessionStorage, for this tab only (this client gets no
// refresh token); signing out revokes them and ends the session.
// `?idp=<id>` in the page's address signs in at that identity provider
// (platform_id_provider). Everything shown is written as text, never as
// markup.
'use strict'
;(() => {
  const CLIENT_ID = 'platform-account'
  const BASE = location.origin + location.pathname.replace(/\/account$/, '')
  const REDIRECT = BASE + '/account'
  const ISSUER = BASE + '/oauth2/v1'
  const STORE = 'platform-account'
  const PAGE = 100
  /** A token is put aside this long before it expires. */
  const MARGIN_MS = 30000
  /** A token refused within this long of its issue is not asked for again in this tab. */
  const FRESH_MS = 10000

  const $ = (id) => document.getElementById(id)

  function load() {
    try {
      const saved = JSON.parse(sessionStorage.getItem(STORE) || '{}')
      return { tokens: {}, refused: {}, ...saved }
    } catch {
      return { tokens: {}, refused: {} }
    }
  }
  const state = load()
  const save = () => sessionStorage.setItem(STORE, JSON.stringify(state))

  function say(text, error) {
    const el = $('status')
    el.textContent = text
    el.className = error ? 'status error' : 'status'
  }

  function b64url(bytes) {
    let s = ''
    for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b)
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
  }
  const random = (n) => b64url(crypto.getRandomValues(new Uint8Array(n)))

  /** Sends the browser to the authorization endpoint; `tenant` undefined: the identity only. */
  async function signIn(tenant, silent) {
    if (!crypto.subtle) {
      say('This page needs a secure connection (https) to sign you in.', true)
      return
    }
    const verifier = random(32)
    const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
    const st = random(16)
    state.pending = { state: st, verifier, tenant }
    save()
    const params = new URLSearchParams({
      response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT, state: st,
      scope: tenant === undefined ? 'openid profile email' : 'openid platform.tenant=' + tenant,
      code_challenge: challenge, code_challenge_method: 'S256',
    })
    if (silent) params.set('prompt', 'none')
    if (state.idp !== undefined) params.set('platform_id_provider', state.idp)
    location.assign(ISSUER + '/authorize?' + params.toString())
  }

  const form = (fields) => ({
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
  })

  /** The answer of /authorize in this page's address: a code to exchange, or an error. */
  async function finishSignIn(params) {
    const pending = state.pending
    delete state.pending
    save()
    if (pending === undefined || params.get('state') !== pending.state) {
      say('This sign-in was not started from this page: sign in again.', true)
      return
    }
    const key = pending.tenant === undefined ? '' : pending.tenant
    const error = params.get('error')
    if (error !== null) {
      if (error === 'login_required' || error === 'interaction_required') {
        state.tokens = {}
        save()
      } else if (pending.tenant !== undefined) {
        state.refused[key] = params.get('error_description') || error
        save()
      } else {
        say('Sign-in failed: ' + (params.get('error_description') || error), true)
      }
      return
    }
    const res = await fetch(ISSUER + '/token', form({
      grant_type: 'authorization_code', code: params.get('code') || '', redirect_uri: REDIRECT, client_id: CLIENT_ID, code_verifier: pending.verifier,
    }))
    const body = await res.json()
    if (!res.ok) {
      const why = body.error_description || body.message || String(res.status)
      // A tenant whose token cannot be had is not asked again in this tab (no loop of redirects).
      if (pending.tenant !== undefined) state.refused[key] = why
      save()
      say('Sign-in failed: ' + why, true)
      return
    }
    state.tokens[key] = { access: body.access_token, at: Date.now(), until: Date.now() + body.expires_in * 1000 - MARGIN_MS }
    if (body.id_token) state.idToken = body.id_token
    // A new sign-in asks again for the tenants refused before (a membership may have been given since).
    if (pending.tenant === undefined) state.refused = {}
    else delete state.refused[key]
    save()
  }

  function liveToken(key) {
    const t = state.tokens[key]
    return t !== undefined && t.until > Date.now() ? t.access : undefined
  }
  const anyToken = () => Object.keys(state.tokens).map(liveToken).find((t) => t !== undefined)
  const bearer = (token) => ({ authorization: 'Bearer ' + token })

  function showSignedOut(text) {
    $('account').hidden = true
    $('sign-out').hidden = true
    $('who').textContent = ''
    $('signed-out').hidden = false
    if (text) say(text)
  }

  async function errorText(res) {
    try {
      const body = await res.json()
      return body.message || body.error_description || String(res.status)
    } catch {
      return String(res.status)
    }
  }

  const graph = (tenant) => BASE + '/graph/v1/' + encodeURIComponent(tenant)
  const when = (ms) => (typeof ms === 'number' ? new Date(ms).toLocaleString() : 'not recorded')

  function el(tag, text, className) {
    const e = document.createElement(tag)
    if (text !== undefined) e.textContent = text
    if (className !== undefined) e.className = className
    return e
  }

  /** Every consent of the subject in the tenant, page by page. */
  async function consentsOf(tenant, token) {
    const all = []
    for (;;) {
      const q = new URLSearchParams({ limit: String(PAGE) })
      if (all.length > 0) q.set('after', all[all.length - 1].consentReference)
      const res = await fetch(graph(tenant) + '/consents?' + q.toString(), { headers: bearer(token) })
      if (!res.ok) return res
      const page = await res.json()
      all.push(...page)
      if (page.length < PAGE) return all
    }
  }

  function confirmThen(text, action) {
    $('confirm-text').textContent = text
    $('confirm').hidden = false
    $('confirm-yes').focus()
    $('confirm-yes').onclick = () => {
      $('confirm').hidden = true
      void action()
    }
    $('confirm-no').onclick = () => { $('confirm').hidden = true }
  }

  function busy(on) {
    for (const b of document.querySelectorAll('#tenant button')) b.disabled = on
  }

  function consentItem(tenant, token, c) {
    const li = el('li')
    li.dataset.ref = c.consentReference
    const head = el('div')
    head.append(el('span', c.status === 'granted' ? 'Granted' : 'Taken back', 'state ' + c.status), el('span', c.consentReference, 'ref'))
    const dl = el('dl')
    const row = (term, value) => dl.append(el('dt', term), el('dd', value))
    row('Given to', c.clientId || 'not recorded')
    row('Given on', when(c.created))
    row('Last changed', when(c.changed))
    if (c.revokedProperties.length > 0) row('Not shared', c.revokedProperties.join(', '))
    if (c.status !== 'granted') row('Its data', 'destroyed')
    li.append(head, dl)
    if (c.status === 'granted') {
      const revoke = el('button', 'Take back this consent', 'danger revoke')
      revoke.type = 'button'
      revoke.onclick = () => confirmThen(
        'Take back consent ' + c.consentReference + '? What the shop stored under it is destroyed and cannot be brought back.',
        () => act(tenant, token, 'DELETE', '/consents/' + encodeURIComponent(c.consentReference), 'Consent taken back: what was stored under it is destroyed.'),
      )
      li.append(revoke)
    }
    return li
  }

  async function act(tenant, token, method, path, done) {
    busy(true)
    try {
      const res = await fetch(graph(tenant) + path, { method, headers: bearer(token) })
      if (res.status === 204) say(done)
      else say('That did not work: ' + (await errorText(res)), true)
    } catch (err) {
      say('That did not work: ' + err.message, true)
    }
    await showTenant(tenant)
  }

  async function download(tenant, token) {
    busy(true)
    say('Preparing your data...')
    try {
      const res = await fetch(graph(tenant) + '/subject/export', { headers: { ...bearer(token), accept: 'application/json' } })
      if (!res.ok) {
        say('The download did not work: ' + (await errorText(res)), true)
        return
      }
      const url = URL.createObjectURL(await res.blob())
      const a = el('a')
      a.href = url
      a.download = 'my-data-' + tenant.replace(/[^A-Za-z0-9._-]/g, '_') + '.json'
      document.body.append(a)
      a.click()
      a.remove()
      setTimeout(() => URL.revokeObjectURL(url), 60000)
      say('Your data is downloaded as ' + a.download + '.')
    } catch (err) {
      say('The download did not work: ' + err.message, true)
    } finally {
      busy(false)
    }
  }

  async function showTenant(tenant) {
    const token = liveToken(tenant)
    if (token === undefined) {
      await signIn(tenant, true)
      return
    }
    $('tenant').hidden = false
    $('tenant-name').textContent = tenant
    $('confirm').hidden = true
    const list = $('consents')
    busy(true)
    const consents = await consentsOf(tenant, token)
    if (!Array.isArray(consents)) {
      if (consents.status === 401) {
        // A token refused at once is not fetched again and again (no loop of redirects).
        const fresh = Date.now() - (state.tokens[tenant].at || 0) < FRESH_MS
        delete state.tokens[tenant]
        if (fresh) state.refused[tenant] = await errorText(consents)
        save()
        if (fresh) await openTenant(tenant)
        else await signIn(tenant, true)
        return
      }
      say('Your consents could not be read: ' + (await errorText(consents)), true)
      busy(false)
      return
    }
    list.replaceChildren(...consents.map((c) => consentItem(tenant, token, c)))
    $('empty').hidden = consents.length > 0
    busy(false)
    $('download').onclick = () => void download(tenant, token)
    $('erase').onclick = () => confirmThen(
      'Erase everything about you at ' + tenant + '? Every consent is taken back and what the shop stored under them is destroyed for good. Download your data first if you want a copy.',
      () => act(tenant, token, 'DELETE', '/subject', 'Erased: every consent is taken back and what was stored under them is destroyed.'),
    )
  }

  function showTenants(tenants, selected) {
    const nav = $('tenants')
    nav.replaceChildren(...tenants.map((t) => {
      const b = el('button', t)
      b.type = 'button'
      b.setAttribute('aria-current', String(t === selected))
      b.onclick = () => {
        say('')
        state.tenant = t
        save()
        showTenants(tenants, t)
        void openTenant(t)
      }
      return b
    }))
  }

  async function openTenant(tenant) {
    const refused = state.refused[tenant]
    if (refused !== undefined) {
      $('tenant').hidden = true
      say('This page cannot open ' + tenant + ': ' + refused, true)
      return
    }
    await showTenant(tenant)
  }

  async function signOut() {
    const idToken = state.idToken
    for (const key of Object.keys(state.tokens)) await fetch(ISSUER + '/revoke', form({ token: state.tokens[key].access, client_id: CLIENT_ID }))
    sessionStorage.removeItem(STORE)
    if (idToken === undefined) {
      location.assign(REDIRECT)
      return
    }
    location.assign(ISSUER + '/end_session?' + new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: REDIRECT }).toString())
  }

  async function main() {
    $('sign-in').onclick = () => void signIn(undefined, false)
    $('sign-out').onclick = () => void signOut()
    const params = new URLSearchParams(location.search)
    // /account?idp=<id>: a shop whose customers sign in at its own identity provider links the page so.
    if (params.has('idp')) {
      state.idp = params.get('idp')
      save()
      history.replaceState(null, '', REDIRECT)
    }
    if (params.has('code') || params.has('error')) {
      history.replaceState(null, '', REDIRECT)
      await finishSignIn(params)
    }
    const token = anyToken()
    if (token === undefined) {
      showSignedOut()
      return
    }
    const res = await fetch(ISSUER + '/userinfo', { headers: bearer(token) })
    if (!res.ok) {
      state.tokens = {}
      save()
      showSignedOut('Your sign-in has ended: sign in again.')
      return
    }
    const me = await res.json()
    $('who').textContent = 'Signed in as ' + me.preferred_username + (me.email ? ' (' + me.email + ')' : '')
    $('sign-out').hidden = false
    $('signed-out').hidden = true
    $('account').hidden = false
    const tenants = me.tenants
    if (tenants.length === 0) {
      say('No shop here keeps data about you under your account.')
      return
    }
    const selected = tenants.includes(state.tenant) ? state.tenant : tenants[0]
    showTenants(tenants, selected)
    await openTenant(selected)
  }

  main().catch((err) => say('Something went wrong: ' + err.message, true))
})()
