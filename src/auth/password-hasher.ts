// The front thread's handle on the piscina pool that runs scrypt. A full
// queue (a flood of sign-in attempts) answers 503 instead of queueing
// without bound.
import { Piscina } from 'piscina'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../errors'
import { SCRYPT_PARAMS, type PasswordTask, type ScryptHash } from '../../workers/crypto/password-hash'

export type { ScryptHash }

const MAX_QUEUE = 256

/** Whether a stored hash was made with weaker settings than today's (then it is made again). */
export function weakerThanCurrent(stored: ScryptHash): boolean {
  return stored.N * stored.p < SCRYPT_PARAMS.N * SCRYPT_PARAMS.p || stored.r < SCRYPT_PARAMS.r
}

export class PasswordHasher {
  private readonly pool: Piscina

  constructor(filename = join(__dirname, '..', '..', 'workers', 'crypto', 'password-hash.js')) {
    this.pool = new Piscina({
      filename, minThreads: 0, maxThreads: Math.max(1, Math.min(4, availableParallelism())), idleTimeout: 30_000, maxQueue: MAX_QUEUE,
    })
  }

  private async run<T>(task: PasswordTask): Promise<T> {
    if (this.pool.queueSize >= MAX_QUEUE) throw new ApiError('service_unavailable', 'too many password checks are waiting; retry shortly')
    return (await this.pool.run(task)) as T
  }

  hash(secret: string): Promise<ScryptHash> {
    return this.run({ op: 'hash', secret })
  }

  verify(secret: string, stored: ScryptHash): Promise<boolean> {
    return this.run({ op: 'verify', secret, stored })
  }

  async close(): Promise<void> {
    await this.pool.destroy()
  }
}
