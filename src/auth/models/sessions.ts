// Browser sign-in sessions behind the HttpOnly, SameSite cookie: the cookie
// holds 256 random bits, the store only their SHA-256. A session lasts
// SESSION_TTL_MS from sign-in (no sliding renewal) and remembers the clients
// it was used for; /end_session ends it.
import { durable } from './auth-store'
import { now } from '../../core/clock'
import type { AuthStore, SessionRecord } from './auth-store'
import { randomToken, sha256 } from '../helpers/secrets'

export const SESSION_TTL_MS = 8 * 3600_000
export const SESSION_COOKIE = 'platform_session'

export interface LiveSession {
  hash: string
  record: SessionRecord
}

export class Sessions {
  constructor(private readonly store: AuthStore) {}

  async create(sub: string, client: string): Promise<{ cookie: string; record: SessionRecord }> {
    const cookie = randomToken()
    const t = now()
    const record: SessionRecord = { sub, authTime: t, exp: t + SESSION_TTL_MS, clients: [client] }
    await this.store.sessions.put(sha256(cookie), record)
    await durable(this.store)
    return { cookie, record }
  }

  /** The live session of a cookie value, or undefined. */
  find(cookie: string | undefined): LiveSession | undefined {
    if (cookie === undefined || cookie === '') return undefined
    const hash = sha256(cookie)
    const record = this.store.sessions.get(hash)
    if (record === undefined || record.exp <= now()) return undefined
    return { hash, record }
  }

  async addClient(session: LiveSession, client: string): Promise<void> {
    if (session.record.clients.includes(client)) return
    await this.store.sessions.put(session.hash, { ...session.record, clients: [...session.record.clients, client] })
  }

  async end(session: LiveSession): Promise<void> {
    await this.store.sessions.remove(session.hash)
    await durable(this.store)
  }

  /** Ends every session of a user (the user was deleted). */
  async endForUser(sub: string): Promise<void> {
    for (const { key, value } of this.store.sessions.getRange()) if (value.sub === sub) void this.store.sessions.remove(key)
    await durable(this.store)
  }

  async sweep(): Promise<void> {
    const t = now()
    for (const { key, value } of this.store.sessions.getRange()) if (value.exp <= t) void this.store.sessions.remove(key)
    await durable(this.store)
  }
}
