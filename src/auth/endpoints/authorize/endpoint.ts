// GET and POST /oauth2/v1/authorize: validate the request (validate.ts),
// find who the user is (a sign-in form post, an id_token_hint, or the
// session cookie; otherwise show the sign-in page), compute the grant with
// the user's roles, ask the user's consent when prompt=consent, and send the
// code or the tokens to the redirect URI.
import { AUTHORIZE_PARAMS } from '../documented-forms'
import { now } from '../../../core/clock'
import { ApiError } from '../../../core/errors'
import type { Exchange } from '../../../http/exchange'
import type { AuthServices } from '../../services'
import { requestSource } from '../../../net/client-source'
import type { UserRecord } from '../../models/auth-store'
import { readCookie, setCookie } from '../../helpers/cookies'
import { sendErrorPage, wantsHtml } from '../../helpers/html'
import { signIdToken, verifyIdTokenHint } from '../../helpers/id-tokens'
import { TOO_MANY_ATTEMPTS, tooManyAttempts } from '../../models/lockout'
import { nameTooLong } from '../../../model/name-limit'
import { oauthErrorAnswered } from '../../../telemetry/metrics'
import { queryOrForm } from '../../route-types'
import { grantScopes, scopeString, userGrant } from '../../helpers/scopes'
import { SESSION_COOKIE, SESSION_TTL_MS, type LiveSession } from '../../models/sessions'
import { sendConsentPage } from './consent-page'
import { errorLocation, redirect, successLocation } from './respond'
import { flowOf, RedirectError, type AuthorizationRequest } from './request'
import { CSRF_COOKIE, csrfValid, sendSignInPage } from './sign-in-page'
import { authorizationParams, validateAuthorizationRequest } from './validate'
import { isCustomProvider, upstreamLocation } from './upstream'
import { HtmlPage, Redirect } from '../answers'

export interface Identity {
  user: UserRecord
  authTime: number
  session?: LiveSession
}

const INVALID_CREDENTIALS = 'Invalid username or password.'

export function sessionCookies(s: AuthServices, cookie: string): string[] {
  const secure = s.oauth.secureCookies
  return [
    setCookie(SESSION_COOKIE, cookie, { secure, sameSite: 'Lax', maxAge: SESSION_TTL_MS / 1000 }),
    setCookie(CSRF_COOKIE, '', { secure, sameSite: 'Strict', maxAge: 0 }),
  ]
}

/** A sign-in form post; undefined when the answer (form again, error) was already sent. */
async function signIn(s: AuthServices, ex: Exchange, req: AuthorizationRequest, form: URLSearchParams): Promise<{ identity: Identity; cookies: string[] } | undefined> {
  if (!csrfValid(ex, form.get('csrf'), new URL(s.publicUrl).origin)) {
    throw new ApiError('forbidden', 'the sign-in form expired or was not sent from this server: start again from the application')
  }
  const action = `${s.oauth.issuer}/authorize`
  const username = form.get('username') ?? ''
  const password = form.get('password') ?? ''
  const html = wantsHtml(ex.headers.accept)
  if (username === '' || password === '') {
    if (html) sendSignInPage(ex, req, action, s.oauth.secureCookies, { status: 400, error: 'Enter your username and password.', username })
    else ex.error(new ApiError('bad_request', 'username and password are required'))
    return undefined
  }
  const long = nameTooLong('the username', username)
  if (long !== undefined) {
    // Not echoed back into the form: it is past any length a username can have.
    if (html) sendSignInPage(ex, req, action, s.oauth.secureCookies, { status: 400, error: `${long[0]!.toUpperCase()}${long.slice(1)}.`, username: '' })
    else ex.error(new ApiError('bad_request', long))
    return undefined
  }
  // A limited attempt (429) or a busy pool (503) goes to the error page or JSON error, with Retry-After.
  const result = await s.oauth.signIn.authenticate(username, password, requestSource(ex, s.trustProxy), false)
  if (!result.ok) {
    const blocked = result.reason === 'blocked'
    if (html) {
      sendSignInPage(ex, req, action, s.oauth.secureCookies, {
        status: blocked ? 400 : 401, error: blocked ? TOO_MANY_ATTEMPTS : INVALID_CREDENTIALS, username,
      })
    } else {
      ex.error(blocked ? tooManyAttempts(false) : new ApiError('insufficient_credentials', INVALID_CREDENTIALS))
    }
    return undefined
  }
  const { cookie, record } = await s.oauth.sessions.create(result.user.id, req.client.client_id)
  return { identity: { user: result.user, authTime: record.authTime }, cookies: sessionCookies(s, cookie) }
}

/** Whether a sign-in at `authTime` is recent enough for the request's max_age. */
const recentEnough = (req: AuthorizationRequest, authTime: number): boolean => req.maxAge === undefined || now() - authTime <= req.maxAge * 1000

/**
 * Who the user is without a form: an id_token_hint (an unexpired ID token
 * this server issued to this very client), or a live session; unless the
 * request asks for a fresh sign-in (prompt=login, max_age).
 */
async function knownIdentity(s: AuthServices, ex: Exchange, req: AuthorizationRequest, prompt = req.prompt): Promise<Identity | undefined> {
  if (prompt === 'login') return undefined
  if (req.idTokenHint !== undefined) {
    const hint = await verifyIdTokenHint(s.oauth.keys, s.oauth.issuer, req.idTokenHint, req.client.client_id)
    const user = hint === undefined ? undefined : s.oauth.users.find(hint.sub)
    if (hint === undefined || user === undefined) {
      throw new RedirectError(req, 'invalid_request', 'id_token_hint is invalid, expired, or was not issued to this client')
    }
    if (recentEnough(req, hint.authTime)) return { user, authTime: hint.authTime }
  } else {
    const session = s.oauth.sessions.find(readCookie(ex.headers.cookie, SESSION_COOKIE))
    const user = session === undefined ? undefined : s.oauth.users.find(session.record.sub)
    if (session !== undefined && user !== undefined && recentEnough(req, session.record.authTime)) {
      return { user, authTime: session.record.authTime, session }
    }
  }
  if (prompt === 'none') throw new RedirectError(req, 'login_required', 'the user is not signed in')
  return undefined
}

/**
 * The answer of the consent page (prompt=consent): the user is the one the
 * session or hint names. prompt=login was met by the sign-in that led to the
 * page, so it is not asked again; max_age still is.
 */
async function consentAnswer(s: AuthServices, ex: Exchange, req: AuthorizationRequest, form: URLSearchParams): Promise<Identity | undefined> {
  if (!csrfValid(ex, form.get('csrf'), new URL(s.publicUrl).origin)) {
    throw new ApiError('forbidden', 'the consent form expired or was not sent from this server: start again from the application')
  }
  if (form.get('consent') !== 'allow') throw new RedirectError(req, 'access_denied', 'the user denied the request')
  return knownIdentity(s, ex, req, undefined)
}

/** The code (code flow) or the tokens (implicit flows) for the user, sent to the redirect URI. */
export async function grantAndRedirect(s: AuthServices, ex: Exchange, req: AuthorizationRequest, identity: Identity, cookies: string[], consented: boolean): Promise<void> {
  const { user } = identity
  const client = req.client
  let grant
  try {
    grant = userGrant(s.oauth, client, user, req.scope, flowOf(req.responseType))
  } catch (err) {
    if (err instanceof ApiError && err.oauth !== undefined) throw new RedirectError(req, err.oauth.error, err.oauth.error_description)
    throw err
  }
  if (req.consent && !consented) {
    sendConsentPage(ex, req, `${s.oauth.issuer}/authorize`, s.oauth.secureCookies, grantScopes(grant), cookies)
    return
  }
  if (identity.session !== undefined) await s.oauth.sessions.addClient(identity.session, client.client_id)
  const fields = { client: client.client_id, tenant: grant.tenant, org: grant.org, scopes: grantScopes(grant), sub: user.id, sessionId: req.sessionId }
  let values: Record<string, string>
  if (req.responseType === 'code') {
    const code = await s.oauth.codes.issue({
      ...fields, clientAuthenticated: client.secret !== undefined, redirectUri: req.redirectUri, redirectUriGiven: req.redirectUriGiven,
      codeChallenge: req.codeChallenge, codeChallengeMethod: req.codeChallengeMethod, nonce: req.nonce, authTime: identity.authTime,
    })
    values = { code }
  } else {
    // Implicit tokens are issued without client authentication: whoever holds them may revoke them.
    const { token } = await s.tokens.issue({ ...fields, clientAuthenticated: false })
    values = { access_token: token, token_type: 'Bearer', expires_in: String(s.tokens.ttl), scope: scopeString(grant) }
    if (req.responseType === 'id_token token') {
      values.id_token = await signIdToken(s.oauth.keys, {
        issuer: s.oauth.issuer, clientId: client.client_id, user, scopes: fields.scopes, nonce: req.nonce, authTime: identity.authTime,
        accessToken: token, ttlSeconds: s.oauth.idTokenTtl,
      })
    }
  }
  redirect(ex, successLocation(req, values, s.oauth.issuer), { 'set-cookie': cookies })
}

/** Cookies set on the way (a new session) go out with whatever answer follows, a redirect error included. */
async function authorize(s: AuthServices, ex: Exchange, all: URLSearchParams, cookies: string[]): Promise<void> {
  const req = validateAuthorizationRequest(s.oauth.clients, ex, authorizationParams(all), isCustomProvider(s))
  let identity: Identity | undefined
  // Only the consent form's own post counts as consent; a sign-in post never does.
  const consented = ex.method === 'POST' && all.has('consent') && !all.has('username')
  if (ex.method === 'POST' && all.has('username')) {
    const signedIn = await signIn(s, ex, req, all)
    if (signedIn === undefined) return
    identity = signedIn.identity
    cookies.push(...signedIn.cookies)
  } else {
    identity = consented ? await consentAnswer(s, ex, req, all) : await knownIdentity(s, ex, req)
    if (identity === undefined && req.upstream !== undefined) {
      redirect(ex, await upstreamLocation(s, ex, req, req.upstream, cookies), { 'set-cookie': cookies })
      return
    }
    if (identity === undefined) {
      sendSignInPage(ex, req, `${s.oauth.issuer}/authorize`, s.oauth.secureCookies, { status: 200 })
      return
    }
  }
  await grantAndRedirect(s, ex, req, identity, cookies, consented)
}

function answer(s: AuthServices, ex: Exchange, all: URLSearchParams): void {
  settleAuthorization(s, ex, (cookies) => authorize(s, ex, all, cookies))
}

/** Runs an authorization step; its failure goes to the redirect URI (RedirectError) or to an error page. */
export function settleAuthorization(s: AuthServices, ex: Exchange, work: (cookies: string[]) => Promise<void>): void {
  const cookies: string[] = []
  work(cookies).catch((err: unknown) => {
    if (err instanceof RedirectError) {
      oauthErrorAnswered(err.error)
      redirect(ex, errorLocation(err.target, err.error, err.description, s.oauth.issuer), { 'set-cookie': cookies })
    } else if (err instanceof ApiError) sendErrorPage(ex, err)
    else ex.error(err)
  })
}

export const authorizeEndpoint = queryOrForm(answer, 'The authorization endpoint (OAuth 2.0 / OpenID Connect): sign-in and consent pages, then the redirect', AUTHORIZE_PARAMS, { 200: HtmlPage, 302: Redirect })
