// The ID token signing keys: one active key signs; a rotation makes a new
// active key and retires the previous one, which stays in the JWKS until
// every token it signed has expired (token lifetime plus a clock margin),
// then is deleted. The keys live in the auth store, so the rotation command
// (src/commands/rotate-signing-key.ts, another process) and the server see the same
// set; the server reads it on every use.
import { durable } from './auth-store'
import type { JWTPayload } from 'jose'
import { now } from '../../core/clock'
import type { AuthStore, SigningKeyRecord } from './auth-store'
import type { GeneratedKey, KeySigner } from '../helpers/signing-pool'

/** Clients verifying an ID token may allow this much clock skew. */
export const CLOCK_MARGIN_MS = 5 * 60_000

function byNewest(a: SigningKeyRecord, b: SigningKeyRecord): number {
  return b.created - a.created
}

/** Stores `key` as the active key and retires the others, in one transaction. */
export async function rotateSigningKey(store: AuthStore, key: GeneratedKey): Promise<SigningKeyRecord> {
  const t = now()
  const record: SigningKeyRecord = { kid: key.kid, alg: 'RS256', created: t, publicJwk: key.publicJwk, sealed: key.sealed }
  await store.env.transaction(() => {
    for (const { value } of store.signingKeys.getRange()) {
      if (value.retired === undefined) store.signingKeys.putSync(value.kid, { ...value, retired: t })
    }
    store.signingKeys.putSync(record.kid, record)
  })
  await durable(store)
  return record
}

export class SigningKeys {
  constructor(private readonly store: AuthStore, private readonly signer: KeySigner, private readonly tokenTtlSeconds: number) {}

  /** Makes the first key when there is none (first start). */
  async ensureActiveKey(): Promise<void> {
    if (this.active() === undefined) await rotateSigningKey(this.store, await this.signer.generate())
  }

  async rotate(): Promise<SigningKeyRecord> {
    return rotateSigningKey(this.store, await this.signer.generate())
  }

  /** Every key, in the table's (kid) order. */
  stored(): SigningKeyRecord[] {
    return [...this.store.signingKeys.getRange()].map(({ value }) => value)
  }

  private all(): SigningKeyRecord[] {
    return this.stored().sort(byNewest)
  }

  active(): SigningKeyRecord | undefined {
    return this.all().find((k) => k.retired === undefined)
  }

  private stillPublished(k: SigningKeyRecord, t: number): boolean {
    return k.retired === undefined || k.retired + this.tokenTtlSeconds * 1000 + CLOCK_MARGIN_MS > t
  }

  /** Every key a live ID token may be signed with, newest first. */
  published(): SigningKeyRecord[] {
    const t = now()
    return this.all().filter((k) => this.stillPublished(k, t))
  }

  jwks(): { keys: Record<string, string>[] } {
    return { keys: this.published().map((k) => k.publicJwk) }
  }

  async sign(claims: JWTPayload): Promise<string> {
    const key = this.active()
    if (key === undefined) throw new Error('no active signing key')
    return this.signer.sign(key.kid, key.sealed, claims)
  }

  /** Deletes retired keys no live token can need; run periodically. */
  async prune(): Promise<number> {
    const t = now()
    const gone = this.all().filter((k) => !this.stillPublished(k, t))
    for (const k of gone) void this.store.signingKeys.remove(k.kid)
    await durable(this.store)
    return gone.length
  }
}
