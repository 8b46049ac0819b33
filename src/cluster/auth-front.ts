// The authorization service in a cluster, front side (docs/manual/cluster.md): the
// replicated auth store and its lease (auth-replica.ts), the bearer-token
// checks the owner answers over NATS, and the HTTP hand-over of OAuth, admin
// and gateway requests to the owner. Started by main.ts in cluster mode only
// (a dynamic import).
import { connect } from '@nats-io/transport-node'
import type { Msg } from '@nats-io/nats-core'
import type { HttpRequest } from 'uWebSockets.js'
import { request, type Dispatcher } from 'undici'
import type { AccessTokens } from '../auth/models/access-tokens'
import type { AccessTokenRecord, AuthStore } from '../auth/models/auth-store'
import { AUTH_FORWARDED_HEADER, authVerifySubject, type LeaseValue } from '../contract/cluster-names'
import type { ClusterOptions } from '../config/cluster-options'
import { ApiError } from '../core/errors'
import type { Exchange } from '../http/exchange'
import { clientBody, relay } from '../gateway/forward'
import { log } from '../telemetry/log'
import { leaseBucket } from '../replication/lease-bucket'
import { startAuthReplica, type AuthReplica } from './auth-replica'
import { OK } from '../operations/health'
import { setTimeout as sleep } from 'node:timers/promises'
import type { AuthCluster } from './auth-seam'

/** Hop-by-hop headers (RFC 9110 7.6.1) and the host: not handed on. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host'])

/** Long enough for the longest long-poll (the events endpoint's wait); a host that died answers at once with a reset. */
const PROXY_HEADERS_TIMEOUT_MS = 5 * 60_000

type Verdict = { record: AccessTokenRecord | undefined } | { notOwner: true }

export interface ClusterAuth extends AuthCluster {
  /** The readiness check: ok once an owner of the authorization service has applied the bootstrap file and answers. */
  check(): string
  close(): Promise<void>
}

/** How often a host that has not yet seen the authorization service served asks its owner. */
const READY_PROBE_MS = 250

export interface ClusterAuthOptions {
  options: ClusterOptions
  store: AuthStore
  tokens: AccessTokens
  /** The data directory (the auth store's snapshots are copied beside it). */
  dataDir: string
  /** Where the other hosts reach this one (hostUrlOf): named in the auth lease, where they hand OAuth requests. */
  hostUrl: string
  /**
   * What a host does to the store each time it gains the auth lease, through
   * the replicated log: the bootstrap file's records and a signing key (both
   * idempotent). On one machine main.ts does it at start.
   */
  prepare(): Promise<void>
  /** Whether an earlier owner already applied it (the store holds what it makes sure of): then a new owner serves at once, while it applies it again. */
  prepared(): boolean
}

export async function startClusterAuth(c: ClusterAuthOptions): Promise<ClusterAuth> {
  const { options, tokens } = c
  const nc = await connect({
    servers: options.servers, name: `auth ${options.nodeId}`,
    // As the actors' connections: a silent partition is noticed within about a lease period.
    maxReconnectAttempts: -1, reconnectTimeWait: 500, pingInterval: Math.max(1000, Math.floor(options.leaseMs / 2)), maxPingOut: 2,
  })
  const kv = await leaseBucket(nc, options.servers.length)
  let prepared: Promise<void> = Promise.resolve()
  // Set once the bootstrap file is applied under the lease held now, or at once when an earlier owner applied it:
  // until then this host, though it holds the lease, does not serve (a client the bootstrap file names would get a
  // wrong 401): requests get a 503 meanwhile.
  let applied = false
  let lease: AuthReplica | undefined
  const applyBootstrap = async (): Promise<void> => {
    for (;;) {
      try {
        await c.prepare()
        applied = true
        return
      } catch (err) {
        log.error({ err }, 'cluster: the bootstrap file could not be applied to the auth store; trying again')
        if (lease !== undefined && !lease.servesHere()) return // the next host to gain the lease applies it
        await sleep(1000)
      }
    }
  }
  lease = await startAuthReplica({
    nc, kv, options, store: c.store, dataDir: c.dataDir, url: c.hostUrl,
    gained() {
      // Token records cached while this host was a standby may have been revoked since.
      tokens.forget()
      applied = c.prepared()
      prepared = applyBootstrap()
    },
  })
  const replica = lease
  // The first host of a cluster claims at once: its bootstrap is in before it says it listens.
  await prepared
  const servesHere = (): boolean => applied && replica.servesHere()
  const retryAfter = String(Math.ceil(options.leaseMs / 1000))
  const noOwner = (why: string): ApiError => new ApiError('service_unavailable', `the authorization service has no owner now (${why}); retry after the lease period`, { headers: { 'retry-after': retryAfter } })
  /** The owner to hand a request or a token check to; a 503 when there is none, or it is this host not serving yet. */
  const owner = (): LeaseValue => {
    const o = replica.owner()
    if (o === undefined) throw noOwner('no host holds a valid auth lease')
    if (o.node === options.nodeId) throw noOwner(`${options.nodeId} holds it and is still applying the bootstrap file`)
    return o
  }

  // The owner answers token checks; it checks its lease on every one, so a deposed owner never answers with its copy.
  const verifying = nc.subscribe(authVerifySubject(options.nodeId), {
    callback: (err: Error | null, msg: Msg) => {
      if (err !== null) return
      const verdict: Verdict = servesHere() ? { record: tokens.verify(msg.string()) } : { notOwner: true }
      msg.respond(JSON.stringify(verdict))
    },
  })

  // Ready once the authorization service has been seen served (here, or by an owner that answers a token check):
  // on a fresh cluster, not before its owner has applied the bootstrap file. Later owner changes are 503s, not unreadiness.
  let authReady = false
  let probing = false
  const probe = setInterval(() => {
    if (authReady || probing) return
    if (servesHere()) {
      authReady = true
      return
    }
    const o = replica.owner()
    if (o === undefined || o.node === options.nodeId) return
    probing = true
    nc.request(authVerifySubject(o.node), '', { timeout: options.leaseMs }).then((m: Msg) => {
      if (!('notOwner' in m.json<Verdict>())) authReady = true
    }, () => undefined).finally(() => { probing = false })
  }, READY_PROBE_MS)
  probe.unref()

  return {
    servesHere,

    check: () => (authReady || servesHere() ? OK : 'the authorization service is not served yet (its owner has not applied the bootstrap file, or no host holds its lease)'),

    async verify(token) {
      const node = owner().node
      let verdict: Verdict
      try {
        verdict = (await nc.request(authVerifySubject(node), token, { timeout: options.leaseMs })).json<Verdict>()
      } catch (err) {
        log.warn({ err }, `cluster: the auth owner ${node} did not answer a token check`)
        throw noOwner(`${node} did not answer`)
      }
      if ('notOwner' in verdict) throw noOwner(`${node} no longer holds it`)
      return verdict.record
    },

    proxy(ex: Exchange, req: HttpRequest) {
      // Owned elsewhere by the time a handed-on request arrives: refused, never handed on again.
      if (req.getHeader(AUTH_FORWARDED_HEADER) !== '') throw noOwner(`${options.nodeId} no longer holds it`)
      const o = owner()
      // No prototype: a header named "constructor" or "__proto__" is forwarded as sent.
      const headers: Record<string, string> = Object.create(null) as Record<string, string>
      req.forEach((name, value) => {
        if (!NOT_FORWARDED.has(name)) headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
      })
      headers[AUTH_FORWARDED_HEADER] = options.nodeId
      // The client's address for the owner's per-address limits (the owner must trust this host: --trust-proxy).
      headers['x-forwarded-for'] = headers['x-forwarded-for'] === undefined ? ex.peer : `${headers['x-forwarded-for']}, ${ex.peer}`
      const hasBody = (ex.headers['content-length'] !== '' && ex.headers['content-length'] !== '0') || req.getHeader('transfer-encoding') !== ''
      const body = hasBody ? clientBody(ex) : undefined
      const abort = new AbortController()
      ex.onAbort = () => abort.abort()
      const target = `${o.url}${ex.rawPath}${ex.rawQuery ? `?${ex.rawQuery}` : ''}`
      request(target, { method: ex.method as Dispatcher.HttpMethod, headers, body, signal: abort.signal, headersTimeout: PROXY_HEADERS_TIMEOUT_MS, bodyTimeout: 0 }).then(
        (answer) => {
          if (ex.aborted) answer.body.destroy()
          else relay(ex, answer, '', '', () => undefined)
        },
        (err: unknown) => {
          log.warn({ err }, `cluster: the auth owner ${o.node} did not answer a handed-on request`)
          ex.error(noOwner(`${o.node} did not answer`))
        },
      )
    },

    async close() {
      clearInterval(probe)
      await verifying.drain().catch(() => undefined)
      await replica.close()
      await nc.drain().catch(() => undefined)
    },
  }
}
