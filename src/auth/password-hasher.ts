// The front thread's handle on the piscina pool that runs scrypt.
import { Piscina } from 'piscina'
import { join } from 'node:path'
import type { PasswordTask, ScryptHash } from '../../workers/crypto/password-hash'

export type { ScryptHash }

export class PasswordHasher {
  private readonly pool: Piscina

  constructor(filename = join(__dirname, '..', '..', 'workers', 'crypto', 'password-hash.js')) {
    this.pool = new Piscina({ filename, minThreads: 0, maxThreads: 1, idleTimeout: 30_000 })
  }

  async hash(secret: string): Promise<ScryptHash> {
    return (await this.pool.run({ op: 'hash', secret } satisfies PasswordTask)) as ScryptHash
  }

  async verify(secret: string, stored: ScryptHash): Promise<boolean> {
    return (await this.pool.run({ op: 'verify', secret, stored } satisfies PasswordTask)) as boolean
  }

  async close(): Promise<void> {
    await this.pool.destroy()
  }
}
