// GET /health/ready's checks (docs/manual/operations.md, "Probes"): each names what
// is wrong, or says "ok". Liveness needs none: an answer is the proof.
import { unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AuthStore } from '../auth/models/auth-store'
import { isDraining } from '../http/in-flight'
import type { ActorPool } from '../shards/actor-pool'

export const OK = 'ok'

export type Checks = Record<'actors' | 'bootstrap' | 'authStore' | 'shutdown' | 'dataDir', string> & {
  /** Cluster mode only: connected to NATS (src/cluster/start.ts). */
  cluster?: string
}

export interface ReadinessSources {
  pool: ActorPool
  authStore: AuthStore
  dataDir: string
  /** Cluster mode's check (src/cluster/start.ts); absent on one machine. */
  cluster?: () => string
  /** Cluster mode: whether the authorization service's owner has applied the bootstrap file (src/cluster/auth-front.ts). On one machine it was applied before the services existed. */
  bootstrap?: () => string
}

function attempt(what: string, fn: () => void): string {
  try {
    fn()
    return OK
  } catch (err) {
    return `${what}: ${(err as Error).message}`
  }
}

/** The checks of a started server (its bootstrap was applied before the services existed). */
export function readiness(src: ReadinessSources): Checks {
  const down = src.pool.actorsDown()
  const probe = join(src.dataDir, '.ready-probe')
  return {
    actors: down.length === 0 ? OK : down.join('; '),
    bootstrap: src.bootstrap?.() ?? OK,
    authStore: attempt('the auth store cannot be read', () => src.authStore.env.getStats()),
    shutdown: isDraining() ? 'the server is shutting down' : OK,
    // A real write: a read-only remount or a full disk fail it where an access check would pass.
    dataDir: attempt('the data directory is not writable', () => {
      writeFileSync(probe, 'ready\n')
      unlinkSync(probe)
    }),
    ...(src.cluster === undefined ? {} : { cluster: src.cluster() }),
  }
}

/** Before the services exist: the shards and the bootstrap are still being opened and applied. */
export function starting(): Checks {
  const wait = 'the server is starting'
  return { actors: wait, bootstrap: wait, authStore: wait, shutdown: isDraining() ? 'the server is shutting down' : OK, dataDir: wait }
}

export function failing(checks: Checks): string[] {
  return Object.entries(checks).filter(([, v]) => v !== OK).map(([k]) => k)
}
