// Authenticates a user by username and password (the sign-in form and the
// password grant), under the lock-out rules. The password is checked with
// scrypt in the pool; an unknown username is checked against a dummy hash so
// that it takes as long as a wrong password. Before a check is queued, the
// attempt limiter may refuse it (429): per source address and per account.
import type { AttemptLimiter } from './attempt-limiter'
import type { UserRecord } from '../models/auth-store'
import type { Lockout } from '../models/lockout'
import type { Users } from '../models/users'
import type { PasswordHasher, ScryptHash } from './password-hasher'
import { audit } from '../../telemetry/log'
import { attemptsRefused, lockoutsStarted, signInFailures } from '../../telemetry/metrics'

export type UserAuthentication = { ok: true; user: UserRecord } | { ok: false; reason: 'blocked' | 'invalid' }

export class UserAuthenticator {
  private dummy: Promise<ScryptHash> | undefined

  constructor(
    private readonly users: Users, private readonly hasher: PasswordHasher, private readonly lockout: Lockout, private readonly limiter: AttemptLimiter,
  ) {}

  /** `source`: the client's address (src/net/client-source.ts); `oauth`: a 429 carries OAuth error fields. */
  async authenticate(username: string, password: string, source: string, oauth: boolean): Promise<UserAuthentication> {
    const user = this.users.findByUsername(username)
    // The account's counter follows the user (a rename does not reset it); unknown names are counted by name.
    const account = user === undefined ? `name:${username}` : `user:${user.id}`
    if (this.lockout.blocked(account)) {
      attemptsRefused.labels('lockout').inc()
      auditSignIn({ ok: false, reason: 'blocked' }, user, source)
      return { ok: false, reason: 'blocked' }
    }
    const admission = this.limiter.admit(source, account, oauth)
    try {
      const result = await this.check(user, account, password)
      admission.end(!result.ok)
      auditSignIn(result, user, source)
      return result
    } catch (err) {
      // No answer (pool busy, shutting down): not a failed attempt.
      admission.end(false)
      throw err
    }
  }

  private async check(user: UserRecord | undefined, account: string, password: string): Promise<UserAuthentication> {
    this.dummy ??= this.hasher.hash('not a password').catch((err: unknown) => {
      this.dummy = undefined
      throw err
    })
    const good = await this.hasher.verify(password, user?.password ?? (await this.dummy), account)
    // A block may have started while this attempt was being checked.
    if (this.lockout.blocked(account)) return { ok: false, reason: 'blocked' }
    if (!good || user === undefined) {
      if (await this.lockout.failure(account)) {
        lockoutsStarted.inc()
        audit('sign_in.lockout', { subject: user?.id }, { unknownUser: user === undefined ? true : undefined })
      }
      return { ok: false, reason: 'invalid' }
    }
    await this.lockout.success(account)
    return { ok: true, user }
  }
}

/** The audit line of an attempt: the user by id (a name typed for an unknown account may be a password), and where from. */
function auditSignIn(result: UserAuthentication, user: UserRecord | undefined, source: string): void {
  if (result.ok) {
    audit('sign_in.success', { subject: result.user.id }, { source })
    return
  }
  signInFailures.inc()
  audit('sign_in.failure', { subject: user?.id }, { reason: result.reason, source, unknownUser: user === undefined ? true : undefined })
}
