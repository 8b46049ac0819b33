// Helpers of the OAuth HTTP tests: a server on the OAuth fixture with a
// movable clock, form posts, a cookie-keeping user agent that walks the
// sign-in page the way a browser would, and redirect parsing.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import { call, type Answer } from './client'
import { ROOT, removeDir, startServer, tempDir, type Server, type StartOptions } from './server'

export const OAUTH_BOOTSTRAP = join(ROOT, 'test', 'fixtures', 'oauth-bootstrap.json')
export const VIEW = 'platform.profile_graph_view'
export const MANAGE = 'platform.profile_graph_manage'
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

export const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`
/** The fixture's confidential code-flow client. */
export const WEB_AUTH = { authorization: basic('web-app', 'web-secret') }

export interface OAuthServer extends Server {
  /** `${url}/oauth2/v1` */
  issuer: string
  clockFile: string
  /** Moves the server's clock `ms` ahead of real time (0: back to real time). */
  setClockOffset(ms: number): void
}

export async function startOAuthServer(options: StartOptions = {}): Promise<OAuthServer> {
  const dataDir = options.dataDir ?? tempDir('oauth-test-')
  const clockFile = join(dataDir, 'clock-offset')
  writeFileSync(clockFile, '0')
  const server = await startServer({
    ...options, dataDir, args: ['--bootstrap', OAUTH_BOOTSTRAP, ...(options.args ?? [])], env: { CLOCK_OFFSET_FILE: clockFile, ...options.env },
  })
  return { ...server, issuer: `${server.url}/oauth2/v1`, clockFile, setClockOffset: (ms) => writeFileSync(clockFile, String(ms)) }
}

/** One server for the whole test file, stopped and removed at teardown; `issuer` is set once started. */
export function oauthServerForFile(tap: { before(fn: () => Promise<void>): void; teardown(fn: () => Promise<void>): void }, options: StartOptions = {}): { server: OAuthServer; issuer: string } {
  const env = {} as { server: OAuthServer; issuer: string }
  tap.before(async () => {
    env.server = await startOAuthServer(options)
    env.issuer = env.server.issuer
  })
  tap.teardown(async () => {
    await env.server.stop()
    removeDir(env.server.dataDir)
  })
  return env
}

export async function postForm(url: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Answer> {
  const body = new URLSearchParams()
  for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one)
  return call('POST', url, { ...FORM, ...headers }, body.toString())
}

export type Json = Record<string, unknown>

export interface TokenAnswer {
  access_token: string
  token_type: string
  expires_in: number
  scope: string
  refresh_token?: string
  id_token?: string
}

/** A /token call that must succeed. */
export async function tokenOk(issuer: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<TokenAnswer> {
  const res = await postForm(`${issuer}/token`, form, headers)
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`)
  return res.json<TokenAnswer>()
}

export async function clientToken(issuer: string, clientId: string, secret: string, scope?: string): Promise<string> {
  const form: Record<string, string> = { grant_type: 'client_credentials' }
  if (scope !== undefined) form.scope = scope
  return (await tokenOk(issuer, form, { authorization: basic(clientId, secret) })).access_token
}

export const adminToken = (issuer: string): Promise<string> => clientToken(issuer, 'platform-admin', 'admin-secret')

export function htmlUnescape(text: string): string {
  return text.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&')
}

/** The hidden fields of the sign-in form. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[htmlUnescape(m[1]!)] = htmlUnescape(m[2]!)
  return out
}

/** Query and fragment parameters of a redirect. */
export function redirectParams(location: string): { base: string; query: URLSearchParams; fragment: URLSearchParams } {
  const hash = location.indexOf('#')
  const beforeHash = hash === -1 ? location : location.slice(0, hash)
  const q = beforeHash.indexOf('?')
  return {
    base: q === -1 ? beforeHash : beforeHash.slice(0, q),
    query: new URLSearchParams(q === -1 ? '' : beforeHash.slice(q + 1)),
    fragment: new URLSearchParams(hash === -1 ? '' : location.slice(hash + 1)),
  }
}

/** A user agent that keeps cookies and does not follow redirects. */
export class UserAgent {
  readonly cookies = new Map<string, string>()

  /** `origin`: what the browser sends as Origin (the public URL's), when `issuer` is another address of the server. */
  constructor(readonly issuer: string, private readonly origin = new URL(issuer).origin) {}

  private remember(setCookie: string | string[] | undefined): void {
    for (const line of setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const [pair, ...attrs] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (value === '' || attrs.some((a) => a.trim().toLowerCase() === 'max-age=0')) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
  }

  async send(method: 'GET' | 'POST', url: string, body?: URLSearchParams, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await request(url, {
      method, headers: { accept: 'text/html', ...this.cookieHeader(), ...(body === undefined ? {} : FORM), ...headers }, body: body?.toString(),
    })
    const text = await res.body.text()
    this.remember(res.headers['set-cookie'])
    return { status: res.statusCode, headers: res.headers, text, json: <T>() => JSON.parse(text) as T }
  }

  authorizeUrl(params: Record<string, string>): string {
    return `${this.issuer}/authorize?${new URLSearchParams(params).toString()}`
  }

  /** GET /authorize. */
  open(params: Record<string, string>): Promise<Answer> {
    return this.send('GET', this.authorizeUrl(params))
  }

  /** Fills the sign-in form of `page` and posts it. */
  submit(page: Answer, username: string, password: string, extra: Record<string, string> = {}): Promise<Answer> {
    const form = new URLSearchParams({ ...hiddenFields(page.text), username, password, ...extra })
    return this.send('POST', `${this.issuer}/authorize`, form, { origin: this.origin })
  }

  /** Opens /authorize, signs in when the page asks, and returns the redirect's Location. */
  authorize(params: Record<string, string>, username?: string, password?: string): Promise<string> {
    return this.authorizeAt(this.authorizeUrl(params), username, password)
  }

  /** The same from a complete authorization URL (one a client library built). */
  async authorizeAt(url: string, username?: string, password?: string): Promise<string> {
    let res = await this.send('GET', url)
    if (res.status === 200 && username !== undefined) res = await this.submit(res, username, password ?? '')
    const location = res.headers.location
    if (typeof location !== 'string') throw new Error(`no redirect: ${res.status} ${res.text.slice(0, 400)}`)
    return location
  }
}

/** One signed-in browser per user and server: later codes come from its session, without another scrypt check. */
const agents = new Map<string, UserAgent>()

/** A code for `user` through `clientId`'s registered redirect URI. */
export async function codeFor(
  issuer: string, params: Record<string, string>, username: string, password: string, origin?: string,
): Promise<{ code: string; location: string }> {
  const key = `${issuer} ${username} ${password}`
  const agent = agents.get(key) ?? new UserAgent(issuer, origin)
  agents.set(key, agent)
  const location = await agent.authorize({ response_type: 'code', ...params }, username, password)
  const code = redirectParams(location).query.get('code')
  if (code === null) throw new Error(`no code in ${location}`)
  return { code, location }
}

export { call, removeDir }
