// The upstream sign-in is bound to the browser that started it (login CSRF,
// RFC 9700 4.7): /authorize sets an HttpOnly cookie with 256 random bits
// (kept when the browser already has one, so parallel sign-ins share it);
// the pending state stores its SHA-256, and the callback only finishes in a
// browser that sends the same cookie. SameSite=Lax: the upstream's redirect
// back is a top-level navigation, which carries it.
import { readCookie, setCookie } from '../helpers/cookies'
import { equalHashes, randomToken, sha256 } from '../helpers/secrets'
import { UPSTREAM_STATE_TTL_MS } from '../models/identity-providers'

export const BINDING_COOKIE = 'platform_upstream'
const TOKEN = /^[A-Za-z0-9_-]{43}$/

/** The browser's binding and, when it is new, the Set-Cookie line for it. */
export function browserBinding(cookieHeader: string, secure: boolean): { value: string; setCookie: string | undefined } {
  const existing = readCookie(cookieHeader, BINDING_COOKIE)
  if (existing !== undefined && TOKEN.test(existing)) return { value: existing, setCookie: undefined }
  const value = randomToken()
  return { value, setCookie: setCookie(BINDING_COOKIE, value, { secure, sameSite: 'Lax', maxAge: UPSTREAM_STATE_TTL_MS / 1000 }) }
}

export function sameBrowser(cookieHeader: string, storedHash: string): boolean {
  const value = readCookie(cookieHeader, BINDING_COOKIE)
  return value !== undefined && TOKEN.test(value) && equalHashes(sha256(value), storedHash)
}
