// The small pure pieces of /authorize and /token: the named checks, the
// redirect locations, PKCE, client registration rules, cookies, escaping.
import t from 'tap'
import { createHash } from 'node:crypto'
import type { ClientRecord } from '../../../src/auth/models/auth-store'
import {
  checkDisplay, checkMaxAge, checkNonce, checkParameters, checkPkce, checkPrompt, checkProvider, checkRedirectUri, checkRequestObjects,
  checkResponseMode, checkResponseType, checkScope, parseResponseType,
} from '../../../src/auth/endpoints/authorize/checks'
import { errorLocation, successLocation } from '../../../src/auth/endpoints/authorize/respond'
import { clientProblem, redirectUriProblem } from '../../../src/auth/helpers/client-rules'
import { readCookie, setCookie } from '../../../src/auth/helpers/cookies'
import { pkceMatches } from '../../../src/auth/endpoints/grants/authorization-code'
import { escapeHtml } from '../../../src/auth/helpers/html'
import { atHash } from '../../../src/auth/helpers/id-tokens'
import { sessionIdOf } from '../../../src/auth/helpers/session-id'
import { ApiError } from '../../../src/core/errors'

const client: ClientRecord = {
  client_id: 'c', tenant: 'demo', secret: { alg: 'sha256', hash: 'h' }, scopes: [],
  redirect_uris: ['https://a.example/cb', 'https://a.example/two?x=1'], grant_types: ['authorization_code'],
}
const publicClient: ClientRecord = { ...client, client_id: 'p', secret: undefined, redirect_uris: ['https://a.example/cb'], grant_types: ['implicit', 'authorization_code'] }
const q = (s: string): URLSearchParams => new URLSearchParams(s)
const verifier = 'a'.repeat(43)

function oauthFails(t: tap.Test, fn: () => unknown, error: string, pattern: RegExp): void {
  const err = t.throws(fn) as ApiError
  t.ok(err instanceof ApiError, 'an ApiError')
  t.equal(err.oauth?.error, error)
  t.match(err.message, pattern)
}

t.test('redirect URI: exact match, or the only registered one', async (t) => {
  t.same(checkRedirectUri(client, q('redirect_uri=https%3A%2F%2Fa.example%2Fcb')), { redirectUri: 'https://a.example/cb', given: true })
  t.same(checkRedirectUri(publicClient, q('')), { redirectUri: 'https://a.example/cb', given: false })
  oauthFails(t, () => checkRedirectUri(client, q('')), 'invalid_request', /required: client "c" has several/)
  oauthFails(t, () => checkRedirectUri(client, q('redirect_uri=https%3A%2F%2Fa.example%2Fcb%2F')), 'invalid_request', /not registered/)
  oauthFails(t, () => checkRedirectUri(client, q('redirect_uri=a&redirect_uri=b')), 'invalid_request', /once/)
  oauthFails(t, () => checkRedirectUri({ ...client, redirect_uris: [] }, q('')), 'invalid_request', /no registered redirect URI/)
})

t.test('response types', async (t) => {
  t.equal(parseResponseType('code'), 'code')
  t.equal(parseResponseType('token'), 'token')
  t.equal(parseResponseType('id_token token'), 'id_token token')
  t.equal(parseResponseType('token  id_token'), 'id_token token')
  t.equal(parseResponseType('id_token'), undefined)
  t.equal(parseResponseType('code id_token'), undefined)
  t.equal(parseResponseType(null), undefined)
  t.equal(checkResponseType(publicClient, q('response_type=token')), 'token')
  oauthFails(t, () => checkResponseType(client, q('response_type=token')), 'unauthorized_client', /may not use/)
  oauthFails(t, () => checkResponseType(client, q('response_type=code+id_token')), 'unsupported_response_type', /not supported/)
  oauthFails(t, () => checkResponseType(client, q('')), 'invalid_request', /required/)
  checkResponseMode(q('response_mode=query'), 'code')
  checkResponseMode(q('response_mode=fragment'), 'token')
  oauthFails(t, () => checkResponseMode(q('response_mode=query'), 'token'), 'invalid_request', /use fragment/)
  oauthFails(t, () => checkResponseMode(q('response_mode=form_post'), 'code'), 'invalid_request', /use query/)
})

t.test('parameters: once each, bounded', async (t) => {
  checkParameters(q('a=1&b=2'))
  checkRequestObjects(q('a=1'))
  oauthFails(t, () => checkRequestObjects(q('request=eyJ')), 'request_not_supported', /request object/)
  oauthFails(t, () => checkRequestObjects(q('request_uri=urn:x')), 'request_uri_not_supported', /request_uri/)
  oauthFails(t, () => checkParameters(q('a=1&a=1')), 'invalid_request', /a must be given once/)
  oauthFails(t, () => checkParameters(q(`state=${'x'.repeat(4097)}`)), 'invalid_request', /longer than 4096/)
})

t.test('identity providers and display', async (t) => {
  t.equal(checkProvider(q('')), 'idp_default')
  t.equal(checkProvider(q('platform_id_provider=idp_legacy')), 'idp_legacy')
  oauthFails(t, () => checkProvider(q('platform_id_provider=okta')), 'invalid_request', /unknown identity provider platform_id_provider="okta"/)
  t.equal(checkDisplay(q('display=popup'), 'idp_default'), 'page')
  t.equal(checkDisplay(q(''), 'idp_default'), 'page')
  t.equal(checkDisplay(q('display=popup'), 'idp_legacy'), 'popup')
  t.equal(checkDisplay(q('display=touch'), 'idp_legacy'), 'page')
})

t.test('scope, nonce, prompt, max_age', async (t) => {
  t.equal(checkScope(q('scope=x'), 'id_token token').scope, 'x openid', 'id_token token implies openid')
  t.equal(checkScope(q(''), 'id_token token').scope, 'openid')
  t.equal(checkScope(q('scope=openid'), 'id_token token').scope, 'openid')
  oauthFails(t, () => checkScope(q('scope=platform.org%3Do'), 'code'), 'invalid_scope', /not supported/)
  t.equal(checkScope(q('scope=platform.org%3Do'), 'token').scopeRequest.org, 'o')
  t.equal(checkNonce(q('nonce=n'), 'id_token token'), 'n')
  t.equal(checkNonce(q(''), 'code'), undefined)
  oauthFails(t, () => checkNonce(q('nonce='), 'id_token token'), 'invalid_request', /nonce is required/)
  t.same(checkPrompt(q('prompt=none')), { prompt: 'none', consent: false })
  t.same(checkPrompt(q('prompt=login+consent')), { prompt: 'login', consent: true })
  t.same(checkPrompt(q('prompt=consent')), { prompt: undefined, consent: true })
  t.same(checkPrompt(q('prompt=select_account')), { prompt: 'login', consent: false }, 'select_account shows the sign-in form')
  oauthFails(t, () => checkPrompt(q('prompt=none+consent')), 'invalid_request', /cannot be combined/)
  oauthFails(t, () => checkPrompt(q('prompt=none+login')), 'invalid_request', /cannot be combined/)
  oauthFails(t, () => checkPrompt(q('prompt=magic')), 'invalid_request', /not supported/)
  t.equal(checkMaxAge(q('max_age=60')), 60)
  t.equal(checkMaxAge(q('')), undefined)
  oauthFails(t, () => checkMaxAge(q('max_age=-1')), 'invalid_request', /whole number/)
})

t.test('PKCE at /authorize and at /token', async (t) => {
  const s256 = createHash('sha256').update(verifier).digest('base64url')
  t.same(checkPkce(q(`code_challenge=${s256}&code_challenge_method=S256`), client, 'code'), { codeChallenge: s256, codeChallengeMethod: 'S256' })
  t.same(checkPkce(q(`code_challenge=${verifier}`), client, 'code'), { codeChallenge: verifier, codeChallengeMethod: 'plain' })
  t.same(checkPkce(q(''), client, 'code'), { codeChallenge: undefined, codeChallengeMethod: undefined }, 'optional for a confidential client')
  t.same(checkPkce(q(''), publicClient, 'token'), { codeChallenge: undefined, codeChallengeMethod: undefined }, 'not for tokens')
  oauthFails(t, () => checkPkce(q(''), publicClient, 'code'), 'invalid_request', /PKCE is required/)
  oauthFails(t, () => checkPkce(q('code_challenge=short'), client, 'code'), 'invalid_request', /43 to 128/)
  oauthFails(t, () => checkPkce(q(`code_challenge=${s256}&code_challenge_method=s256`), client, 'code'), 'invalid_request', /not supported/)

  t.ok(pkceMatches({ codeChallenge: s256, codeChallengeMethod: 'S256' }, verifier))
  t.notOk(pkceMatches({ codeChallenge: s256, codeChallengeMethod: 'S256' }, s256))
  t.ok(pkceMatches({ codeChallenge: verifier, codeChallengeMethod: 'plain' }, verifier))
  t.notOk(pkceMatches({ codeChallenge: verifier, codeChallengeMethod: 'plain' }, undefined))
  t.notOk(pkceMatches({ codeChallenge: 'x'.repeat(10), codeChallengeMethod: 'plain' }, 'x'.repeat(10)), 'a verifier under 43 characters')
  t.ok(pkceMatches({ codeChallenge: undefined, codeChallengeMethod: undefined }, undefined))
  t.notOk(pkceMatches({ codeChallenge: undefined, codeChallengeMethod: undefined }, verifier), 'no downgrade')
})

t.test('redirect locations: code in the query, tokens and errors in the fragment', async (t) => {
  const iss = 'https://id.example/oauth2/v1'
  t.equal(successLocation({ redirectUri: 'https://a.example/cb', state: 's t', responseType: 'code' }, { code: 'C' }, iss),
    'https://a.example/cb?code=C&state=s+t&iss=https%3A%2F%2Fid.example%2Foauth2%2Fv1')
  t.equal(successLocation({ redirectUri: 'https://a.example/two?x=1', state: undefined, responseType: 'code' }, { code: 'C' }, iss),
    'https://a.example/two?x=1&code=C&iss=https%3A%2F%2Fid.example%2Foauth2%2Fv1', 'a registered query is kept')
  t.equal(successLocation({ redirectUri: 'https://a.example/cb', state: 's', responseType: 'token' }, { access_token: 'A' }, iss), 'https://a.example/cb#access_token=A&state=s')
  t.equal(errorLocation({ redirectUri: 'https://a.example/cb', state: 's', responseType: 'token' }, 'access_denied', 'no', iss),
    'https://a.example/cb#error=access_denied&error_description=no&state=s')
  t.equal(errorLocation({ redirectUri: 'https://a.example/cb', state: undefined, responseType: 'code' }, 'invalid_scope', 'bad scope', iss),
    'https://a.example/cb?error=invalid_scope&error_description=bad+scope&iss=https%3A%2F%2Fid.example%2Foauth2%2Fv1#error=invalid_scope&error_description=bad+scope')
})

t.test('client registration rules', async (t) => {
  t.equal(redirectUriProblem('https://a.example/cb?x=1'), undefined)
  t.equal(redirectUriProblem('http://127.0.0.1:8080/cb'), undefined)
  t.equal(redirectUriProblem('http://[::1]/cb'), undefined)
  t.equal(redirectUriProblem('http://localhost/cb'), undefined)
  t.match(redirectUriProblem('http://a.example/cb'), /https/)
  t.match(redirectUriProblem('javascript:alert(1)'), /https/)
  t.match(redirectUriProblem('https://a.example/cb#f'), /fragment/)
  t.match(redirectUriProblem('https://u:p@a.example/cb'), /credentials/)
  t.match(redirectUriProblem('/cb'), /absolute/)
  const ok = { public: false, redirect_uris: ['https://a.example/cb'], grant_types: ['authorization_code'], scopes: ['s'] }
  t.equal(clientProblem(ok), undefined)
  t.match(clientProblem({ ...ok, grant_types: ['x'] }), /not one of/)
  t.match(clientProblem({ ...ok, public: true, grant_types: ['client_credentials'] }), /public client/)
  t.match(clientProblem({ ...ok, redirect_uris: [] }), /need at least one redirect URI/)
  t.match(clientProblem({ ...ok, scopes: ['a b'] }), /one word/)
})

t.test('cookies, escaping, at_hash, session ids', async (t) => {
  t.equal(readCookie('a=1; platform_session=xyz; b=2', 'platform_session'), 'xyz')
  t.equal(readCookie('platform_session_other=1', 'platform_session'), undefined)
  t.equal(readCookie('', 'x'), undefined)
  t.equal(setCookie('n', 'v', { secure: true, sameSite: 'Lax', maxAge: 60 }), 'n=v; Path=/oauth2/v1; Max-Age=60; HttpOnly; SameSite=Lax; Secure')
  t.equal(setCookie('n', '', { secure: false, sameSite: 'Strict', maxAge: 0 }), 'n=; Path=/oauth2/v1; Max-Age=0; HttpOnly; SameSite=Strict')
  t.equal(escapeHtml(`<a href="x">'&'</a>`), '&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;')
  t.equal(atHash('dNZX1hEZ9wBCzNL40Upu646bdzQA'), 'wfgvmE9VxjAudsl9lc6TqA', 'the OIDC example value')
  t.equal(sessionIdOf('client', 'gateway'), 'client')
  t.equal(sessionIdOf(undefined, 'gateway'), 'gateway')
  t.match(sessionIdOf(undefined, ''), /^[0-9a-f-]{36}$/)
  oauthFails(t, () => sessionIdOf('a b', ''), 'invalid_request', /visible ASCII/)
})
