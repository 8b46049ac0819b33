// The metrics read at scrape time from the running services, Node's own
// process metrics (prom-client's defaults) and the build's. Registered once, at start.
import { statfsSync } from 'node:fs'
import { collectDefaultMetrics, Gauge } from 'prom-client'
import type { AuthStore } from '../auth/models/auth-store'
import { isBlocked } from '../auth/models/lockout'
import { now } from '../core/clock'
import { registry } from '../telemetry/metrics'
import { registerBuildInfo } from '../telemetry/build-info'
import type { ActorPool } from '../shards/actor-pool'

export function registerSources(pool: ActorPool, authStore: AuthStore, dataDir: string): void {
  collectDefaultMetrics({ register: registry })
  registerBuildInfo()
  new Gauge({
    name: 'data_dir_free_bytes', help: 'Bytes free for the server on the file system of the data directory (statfs at scrape time)', registers: [registry],
    collect() {
      // bavail, not bfree: the blocks reserved for root are not the server's.
      const fs = statfsSync(dataDir)
      this.set(fs.bavail * fs.bsize)
    },
  })
  new Gauge({
    name: 'shard_actor_queue_depth', help: 'Calls sent to a shard actor and not answered yet, by actor', labelNames: ['actor'] as const, registers: [registry],
    collect() {
      pool.queueDepths().forEach((n, actor) => this.labels(String(actor)).set(n))
    },
  })
  new Gauge({
    name: 'sign_in_lockouts_active', help: 'Accounts locked out now after too many failed sign-ins', registers: [registry],
    collect() {
      const t = now()
      let n = 0
      // The counters are swept every ten minutes, so this range stays small.
      for (const { value } of authStore.lockouts.getRange()) if (isBlocked(value, t)) n++
      this.set(n)
    },
  })
}
