// The metrics read at scrape time from the running services, and Node's
// own process metrics (prom-client's defaults). Registered once, at start.
import { collectDefaultMetrics, Gauge } from 'prom-client'
import type { AuthStore } from '../auth/models/auth-store'
import { isBlocked } from '../auth/models/lockout'
import { now } from '../core/clock'
import { registry } from '../telemetry/metrics'
import type { ActorPool } from '../shards/actor-pool'

export function registerSources(pool: ActorPool, authStore: AuthStore): void {
  collectDefaultMetrics({ register: registry })
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
