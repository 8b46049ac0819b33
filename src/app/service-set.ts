// What a started server runs: the services the routes are handed, and the
// work it does besides answering requests (metrics sources, subscription
// events, webhook delivery, the token sweep).
import type { Bootstrap } from '../bootstrap/bootstrap-file'
import type { Config } from '../config/load-config'
import { Urls } from '../contract/urls'
import { deliveryOptions, WebhookDelivery } from '../events/webhook-delivery'
import { GatewayLimits } from '../gateway/limits'
import { StreamBuffers } from '../http/stream'
import { takeBackup } from '../backups/take-backup'
import { backupShardsThroughActors } from '../backups/through-actors'
import { sweepOAuth } from '../auth/oauth-services'
import { subjectAccount } from '../auth/models/subject-account'
import { Metamodel } from '../model/metamodel'
import { AddressSet } from '../net/addresses'
import type { WebhookPolicy } from '../net/webhook-policy'
import { readiness } from '../operations/health'
import { registerSources } from '../operations/sources'
import type { AuthParts } from '../start/auth-parts'
import type { OpenedDataDir } from '../start/data-dir'
import { log } from '../telemetry/log'
import { dispatchLine } from './dispatch'
import { publishSubscriptionEvents } from './publish-subscription-events'
import type { Services } from './services'
import type { RunningShards } from './start-shards'

const SWEEP_INTERVAL_MS = 10 * 60_000

export function buildServices(config: Config, boot: Bootstrap, opened: OpenedDataDir, publicUrl: string, webhookPolicy: WebhookPolicy, auth: AuthParts, shards: RunningShards): Services {
  const { pool, cluster, authCluster } = shards
  const { authStore, hasher, tokens, oauth } = auth
  const backupSource = { manifest: opened.manifest, authEnv: authStore.env, backupShards: backupShardsThroughActors(pool, opened.manifest.shards) }
  const services: Services = {
    publicUrl, urls: new Urls(publicUrl), maxBody: config.maxBody,
    jsonLimits: { maxDepth: config.maxJsonDepth, maxElements: config.maxJsonElements },
    maxStreamsPerTenant: config.maxStreamsPerTenant, streamBuffers: new StreamBuffers(config.maxStreamBufferMb * 1024 * 1024), pool, metamodel: new Metamodel(boot.metamodel), hasher, tokens, oauth,
    webhookPolicy, trustProxy: new AddressSet(config.trustProxy),
    corsOrigins: new Set(config.corsOrigins),
    gateway: new GatewayLimits({ timeoutMs: config.gatewayTimeoutMs, maxConcurrent: config.gatewayMaxConcurrent }),
    backup: (to: string) => takeBackup(backupSource, to),
    operations: { readiness: () => readiness({ pool, authStore, dataDir: config.dataDir, cluster: cluster?.check, bootstrap: authCluster?.check }), metrics: config.metrics },
    authCluster,
    // A bulk line goes through the dispatcher, which the graph's routes do not import (it imports them).
    dispatchLine: (ex, tenant, token, body) => dispatchLine(services, ex, tenant, token, body),
    account: (subject) => subjectAccount(oauth.users, oauth.federation.links, subject),
  }
  return services
}

export interface BackgroundWork {
  /** Stops the sweep and webhook delivery (a shutdown). */
  stop(): void
}

export function startBackgroundWork(config: Config, webhookPolicy: WebhookPolicy, auth: AuthParts, shards: RunningShards): BackgroundWork {
  const { pool, cluster, authCluster } = shards
  const { authStore, tokens, oauth } = auth
  registerSources(pool, authStore, config.dataDir)
  publishSubscriptionEvents(oauth.subscriptionEvents, pool)
  const webhooks = new WebhookDelivery(pool, deliveryOptions(config.webhookRetryBaseMs, webhookPolicy))
  webhooks.start()
  cluster?.onGained((gained) => webhooks.reload(gained))
  // In a cluster only the auth store's owner writes it (a standby follows the owner's sweeps).
  const sweep = setInterval(() => {
    if (authCluster?.servesHere() !== false) void sweepOAuth(oauth, tokens).catch((err: unknown) => log.error({ err }, 'token sweep failed'))
  }, SWEEP_INTERVAL_MS)
  sweep.unref()
  return {
    stop: () => {
      clearInterval(sweep)
      webhooks.close()
    },
  }
}
