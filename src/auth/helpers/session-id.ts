// platform-session-id: the client's value (a request parameter) wins over
// the gateway's (the header of the same name); without either a new one is
// generated. It is recorded in the tokens and shown by /tokeninfo.
import { randomUUID } from 'node:crypto'
import { invalidRequest } from './oauth-errors'

export const SESSION_ID_PARAM = 'platform-session-id'
const VALID = /^[\x21-\x7e]{1,256}$/

export function sessionIdOf(param: string | undefined, header: string): string {
  const value = param ?? (header === '' ? undefined : header)
  if (value === undefined) return randomUUID()
  if (!VALID.test(value)) throw invalidRequest(`${SESSION_ID_PARAM} must be 1 to 256 visible ASCII characters`)
  return value
}
