// Webhook delivery, on the front thread (docs/design/contracts.md, Events). Each webhook is
// a cursor over its tenant's event log: it POSTs one envelope at a time,
// signed `platform-signature: sha256=<hex HMAC-SHA256 of the raw body>` with
// the webhook's secret, and moves (and persists) its cursor only after a 2xx.
// So delivery is in order per tenant and webhook and at least once: after a
// crash or restart it resumes from the persisted cursor, and an event whose
// 2xx came just before a crash may arrive again (receivers dedupe on
// `sequence`). A failure is retried after RETRY_BASE doubling per failure up
// to 300 times RETRY_BASE (1 s ... 5 min by default); a webhook failing for a
// day (by the one clock, src/core/clock.ts) is suspended and so shown in its GET.
// Each hook's live state (phase and saves) is src/events/webhook-hook.ts.
// Connections go only where the webhook policy allows (src/net/webhook-policy.ts);
// lastError tells the tenant that delivery failed, never what an address or
// port answered, so it cannot be used to map a network.
import { createHmac } from 'node:crypto'
import { request, type Dispatcher } from 'undici'
import { now } from '../core/clock'
import type { ActorPool } from '../shards/actor-pool'
import type { ActorReply, WebhookTarget } from '../contract/messages'
import { readHead, readPage, TenantWakeups, type LoggedEvent } from './event-page'
import { Hook } from './webhook-hook'
import { guardedAgent } from './webhook-connector'
import type { WebhookPolicy } from '../net/webhook-policy'
import { audit, log } from '../telemetry/log'
import { describeCause } from '../core/errors'
import { webhookDeliveries, webhookLagSeconds, webhookSuspensions } from '../telemetry/metrics'
import { traces } from '../telemetry/traces'
import { deliveryEnded, deliverySpan } from './webhook-span'

export const SIGNATURE_HEADER = 'platform-signature'
/** The back-off stops doubling at this multiple of the base (1 s -> 5 min). */
export const RETRY_CAP_FACTOR = 300
export const SUSPEND_AFTER_MS = 24 * 3_600_000
const PAGE_SIZE = 100
/** A shard that could not answer (actor restart, full queue) is asked again after this; not a webhook failure. */
const SHARD_RETRY_MS = 500
/** What a tenant sees in lastError (the server log has the details). */
export const NOT_REACHED = 'delivery failed: the endpoint could not be reached'
export const NOT_ACCEPTED = 'delivery failed: the endpoint answered with a non-2xx status'

export interface DeliveryOptions {
  retryBaseMs: number
  /** per attempt: time to the response headers, and between body chunks */
  timeoutMs: number
  suspendAfterMs: number
  /** where deliveries may connect; used unless a dispatcher is given */
  policy: WebhookPolicy
  /** tests may pass their own */
  dispatcher?: Dispatcher
}

/** The configured back-off base (--webhook-retry-base-ms), defaults for the rest. */
export function deliveryOptions(retryBaseMs: number, policy: WebhookPolicy): DeliveryOptions {
  return { retryBaseMs, timeoutMs: 10_000, suspendAfterMs: SUSPEND_AFTER_MS, policy }
}

/** How old the event of an envelope is: its `time` is the envelope's last member (workers/store/events.ts). */
export function eventAgeMs(json: string, t: number): number | undefined {
  const at = json.lastIndexOf('"time":')
  const time = at === -1 ? NaN : Number.parseInt(json.slice(at + 7), 10)
  return Number.isFinite(time) ? Math.max(0, t - time) : undefined
}

/** The signature header's value for `body` (what a receiver recomputes with its secret). */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** The delay before retry number `failures` (1, 2, ...). */
export function retryDelay(baseMs: number, failures: number): number {
  return Math.min(baseMs * 2 ** Math.min(failures - 1, 30), baseMs * RETRY_CAP_FACTOR)
}

function parseTargets(reply: ActorReply): WebhookTarget[] | undefined {
  if (reply.kind !== 'ok' || reply.body === undefined) return undefined
  const list: unknown = JSON.parse(reply.body)
  return Array.isArray(list) ? (list as WebhookTarget[]) : undefined
}

export class WebhookDelivery {
  /** tenant -> webhook id -> hook */
  private readonly hooks = new Map<string, Map<string, Hook>>()
  private readonly wakeups: TenantWakeups
  private readonly stopChanges: () => void
  private readonly timers = new Set<NodeJS.Timeout>()
  private closed = false
  private readonly dispatcher: Dispatcher
  private readonly ownDispatcher: boolean

  constructor(private readonly pool: ActorPool, private readonly options: DeliveryOptions) {
    this.ownDispatcher = options.dispatcher === undefined
    this.dispatcher = options.dispatcher ?? guardedAgent(options.policy, options.timeoutMs)
    this.wakeups = new TenantWakeups(pool)
    this.stopChanges = pool.onWebhooksChanged((tenant) => this.load(tenant))
  }

  /** Loads every webhook of every shard and delivers from each one's persisted cursor. */
  start(): void {
    this.load(undefined)
  }

  close(): void {
    this.closed = true
    this.stopChanges()
    this.wakeups.close()
    for (const t of this.timers) clearTimeout(t)
    for (const byId of this.hooks.values()) for (const h of byId.values()) this.drop(h)
    this.hooks.clear()
    if (this.ownDispatcher) void this.dispatcher.close().catch(() => undefined)
  }

  private later(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.timers.delete(t)
      if (!this.closed) fn()
    }, ms)
    this.timers.add(t)
    return t
  }

  /** (Re)reads the webhooks of one tenant (after a change) or of all tenants (at start). */
  private load(tenant: string | undefined): void {
    const onReply = (reply: ActorReply, retry: () => void): void => {
      if (this.closed) return
      const targets = parseTargets(reply)
      if (targets === undefined) {
        if (reply.kind === 'error') log.error(`webhook delivery: cannot load webhooks (${reply.message}); retrying`)
        this.later(SHARD_RETRY_MS, retry)
        return
      }
      this.merge(targets, tenant)
    }
    if (tenant !== undefined) {
      const again = (): void => this.load(tenant)
      this.pool.call(tenant, { op: 'webhookTargets', tenant }, (reply) => onReply(reply, again))
      return
    }
    // A shard that fails makes it all load again: merging is idempotent (known hooks keep their state).
    this.pool.callEveryShard({ op: 'webhookTargets', tenant: undefined }, (_shard, reply) => onReply(reply, () => this.load(undefined)))
  }

  /** Adds the new webhooks; with `tenant`, also drops that tenant's deleted ones. Known ones keep their live state. */
  private merge(targets: WebhookTarget[], tenant: string | undefined): void {
    if (tenant !== undefined) {
      const live = new Set(targets.map((t) => t.id))
      const byId = this.hooks.get(tenant)
      if (byId !== undefined) {
        for (const [id, h] of byId) {
          if (live.has(id)) continue
          this.drop(h)
          byId.delete(id)
        }
        if (byId.size === 0) this.hooks.delete(tenant)
      }
    }
    for (const t of targets) {
      let byId = this.hooks.get(t.tenant)
      if (byId === undefined) {
        byId = new Map()
        this.hooks.set(t.tenant, byId)
      }
      if (byId.has(t.id)) continue
      const h = new Hook(t.tenant, t.id, t.url, t.secret, t)
      h.unsubscribe = this.wakeups.add(t.tenant, () => {
        h.more = true
        this.pump(h)
      })
      byId.set(t.id, h)
      this.pump(h)
    }
  }

  private drop(h: Hook): void {
    h.phase = 'removed'
    h.unsubscribe()
    if (h.timer !== undefined) clearTimeout(h.timer)
    h.page = []
  }

  /**
   * Cluster mode: this host gained `shards`. Their tenants' webhooks are read
   * again from the store (their cursors moved on the former owner), and
   * delivered from here. The webhooks of shards it kept are left alone: one
   * dropped while its POST was under way came back at the stored cursor,
   * which did not yet say that POST was answered, and delivered it again.
   */
  reload(shards: ReadonlySet<number>): void {
    if (this.closed) return
    for (const [tenant, byId] of this.hooks) {
      if (!shards.has(this.pool.shardOf(tenant))) continue
      for (const h of byId.values()) this.drop(h)
      this.hooks.delete(tenant)
    }
    // Every shard's list: merging keeps the hooks still known as they are and adds the dropped ones afresh.
    this.load(undefined)
  }

  private pump(h: Hook): void {
    if (this.closed || h.phase !== 'idle') return
    // Delivery runs once cluster-wide: on the host that owns the tenant's shard (reload() starts it on a new owner).
    if (!this.pool.servesHere(h.tenant)) return
    if (h.index < h.page.length) {
      this.post(h, h.page[h.index]!)
      return
    }
    if (!h.more) return
    h.phase = 'reading'
    h.more = false
    readPage(this.pool, h.tenant, h.cursor, PAGE_SIZE, (r) => {
      if (!h.settle() || this.closed) return
      if (r.kind === 'page') {
        if (r.events.length === PAGE_SIZE) h.more = true
        h.page = r.events
        h.index = 0
        this.pump(h)
      } else if (r.kind === 'expired') {
        this.skipExpired(h, r.message)
      } else {
        if (r.kind === 'failed') log.error(`webhook ${h.id} of tenant ${h.tenant}: reading events failed: ${r.message}`)
        h.more = true
        this.wait(h, SHARD_RETRY_MS)
      }
    })
  }

  /** The cursor fell behind retention: those events are gone; go on from the oldest kept, and say so in lastError. */
  private skipExpired(h: Hook, message: string): void {
    h.phase = 'reading'
    readHead(this.pool, h.tenant, (head) => {
      if (!h.settle() || this.closed) return
      h.more = true
      if (head === undefined) {
        this.wait(h, SHARD_RETRY_MS)
        return
      }
      log.warn(`webhook ${h.id} of tenant ${h.tenant}: ${message}; skipping to ${head.first - 1}`)
      h.lastError = `events ${h.cursor + 1} to ${head.first - 1} expired before they could be delivered`
      h.cursor = head.first - 1
      this.save(h)
      this.pump(h)
    })
  }

  private wait(h: Hook, ms: number): void {
    h.phase = 'waiting'
    h.timer = this.later(ms, () => {
      h.timer = undefined
      if (h.settle()) this.pump(h)
    })
  }

  private post(h: Hook, event: LoggedEvent): void {
    h.phase = 'posting'
    const { timeoutMs } = this.options
    const headers: Record<string, string> = { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature(h.secret, event.json) }
    const t = traces
    const span = t === undefined ? undefined : deliverySpan(t, h, event.sequence, headers)
    request(h.url, {
      method: 'POST',
      headers,
      body: event.json,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      dispatcher: this.dispatcher,
    })
      .then(async (res) => {
        // The answer's body is not needed; read (at most 64 KiB of) it so the connection can be reused.
        await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined)
        return res.statusCode
      })
      .then(
        (status) => {
          if (span !== undefined) deliveryEnded(t!, span, status)
          if (status >= 200 && status < 300) this.delivered(h, event)
          else this.failed(h, NOT_ACCEPTED, `HTTP ${status}`, 'rejected')
        },
        (err: unknown) => {
          if (span !== undefined) deliveryEnded(t!, span, undefined, NOT_REACHED)
          this.failed(h, NOT_REACHED, describeCause(err), 'unreachable')
        },
      )
  }

  private delivered(h: Hook, event: LoggedEvent): void {
    if (!h.settle() || this.closed) return
    webhookDeliveries.labels('delivered').inc()
    h.cursor = event.sequence
    h.index++
    h.failures = 0
    h.failingSince = null
    h.lastError = null
    const lag = eventAgeMs(event.json, now())
    if (lag !== undefined) webhookLagSeconds.observe(lag / 1000)
    this.save(h)
    this.pump(h)
  }

  /** `error` is for the tenant, `detail` for the operator's log (once per change of error), `outcome` for the metrics. */
  private failed(h: Hook, error: string, detail: string, outcome: 'rejected' | 'unreachable'): void {
    if (!h.settle() || this.closed) return
    webhookDeliveries.labels(outcome).inc()
    const t = now()
    h.failures++
    h.failingSince ??= t
    if (h.lastError !== error) log.warn(`webhook ${h.id} of tenant ${h.tenant} (${h.url}): ${detail}`)
    h.lastError = error
    if (t - h.failingSince >= this.options.suspendAfterMs) {
      h.phase = 'suspended'
      log.warn(`webhook ${h.id} of tenant ${h.tenant} (${h.url}) suspended: failing since ${new Date(h.failingSince).toISOString()}, last error ${detail}`)
      webhookSuspensions.inc()
      audit('webhook.suspend', { client: 'webhook-delivery' }, { tenant: h.tenant, webhook: h.id })
      this.save(h)
      return
    }
    this.save(h)
    this.wait(h, retryDelay(this.options.retryBaseMs, h.failures))
  }

  /** Persists the hook's state; while a save is in flight, the next one waits and takes the latest state. */
  private save(h: Hook): void {
    if (!h.beginSave()) return
    this.pool.call(h.tenant, { op: 'webhookProgress', tenant: h.tenant, id: h.id, state: h.state() }, (reply) => {
      const lost = reply.kind === 'error' && reply.type === 'service_unavailable'
      h.endSave(lost)
      if (lost) {
        // The actor restarted: save again shortly, so that a restart later does not resend what was delivered.
        this.later(SHARD_RETRY_MS, () => { if (h.takeDue()) this.save(h) })
        return
      }
      if (reply.kind === 'error' && reply.type !== 'element_not_found') {
        log.error(`webhook ${h.id} of tenant ${h.tenant}: saving its cursor failed: ${reply.message}`)
      }
      if (!h.removed && !this.closed && h.takeDue()) this.save(h)
    })
  }
}
