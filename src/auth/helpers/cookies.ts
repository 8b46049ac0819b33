// Cookies of the sign-in page: parsing the Cookie header and writing
// Set-Cookie with HttpOnly, SameSite and (behind https) Secure, scoped to
// the authorization service's path.

export const COOKIE_PATH = '/oauth2/v1'

export function readCookie(header: string, name: string): string | undefined {
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1) continue
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

export interface CookieOptions {
  secure: boolean
  sameSite: 'Strict' | 'Lax'
  /** seconds; 0 deletes the cookie */
  maxAge: number
}

export function setCookie(name: string, value: string, o: CookieOptions): string {
  return `${name}=${value}; Path=${COOKIE_PATH}; Max-Age=${o.maxAge}; HttpOnly; SameSite=${o.sameSite}${o.secure ? '; Secure' : ''}`
}
