// Entry: config -> private data directory, locked -> manifest -> listen ->
// auth store and bootstrap -> shard actors -> ready. Prints `listening
// <bound address>` when ready. SIGTERM/SIGINT drain: stop accepting, answer
// what is in flight (bounded), then close the actors and exit.
// First: the relay of descriptor 2, before anything writes there or the log opens (src/telemetry/stderr-guard.ts).
import './telemetry/start-stderr-guard'
import { readFileSync, writeSync } from 'node:fs'
import { stderrFd, stderrGuarded } from './telemetry/stderr-guard'
import { AccessTokens } from './auth/models/access-tokens'
import { applyAuthBootstrap } from './auth/helpers/apply-bootstrap'
import { applyIdentityProviderBootstrap } from './auth/federation/bootstrap'
import { identityProviderSecretKey } from './auth/federation/sealed-secret'
import { openAuthStore } from './auth/models/auth-store'
import { createOAuthServices, sweepOAuth } from './auth/oauth-services'
import { publishSubscriptionEvents } from './app/publish-subscription-events'
import { PasswordHasher } from './auth/helpers/password-hasher'
import { SigningPool } from './auth/helpers/signing-pool'
import { readBootstrapFile, type Bootstrap } from './bootstrap/bootstrap-file'
import { now, useOffsetClockFromEnv } from './core/clock'
import { ConfigError, isDemoBootstrap, loadConfig, usage, wantsHelp, type Config } from './config/load-config'
import { deriveKey } from './crypto/master-key'
import { readKekFile } from './crypto/kek-file'
import { deliveryOptions, WebhookDelivery } from './events/webhook-delivery'
import { WebhookPolicy } from './net/webhook-policy'
import { listen } from './app/server'
import { drain, inFlight } from './http/in-flight'
import { StreamBuffers } from './http/stream'
import { lockDataDir } from './start/data-dir-lock'
import { tuneHeap } from './start/v8-heap'
import { privateDataDir, privateUmask } from './start/file-modes'
import type { Services } from './app/services'
import { Metamodel } from './model/metamodel'
import { Urls } from './contract/urls'
import { ActorPool, ShardRefused } from './shards/actor-pool'
import { openDataDir, recordFormat } from './start/data-dir'
import { environmentsOf, verifyEnvironments } from './start/lmdb-check'
import { AddressSet } from './net/addresses'
import { GatewayLimits } from './gateway/limits'
import { ensureShredLog } from './crypto/shred-log'
import { takeBackup } from './backups/take-backup'
import { backupShardsThroughActors } from './backups/through-actors'
import { flushLog, log, setLogLevel, startLogThread } from './telemetry/log'
import { readiness } from './operations/health'
import { registerSources } from './operations/sources'
import { hostUrlOf } from './config/cluster-options'

const SWEEP_INTERVAL_MS = 10 * 60_000

/** Only the shipped demo's credentials are printed: they are public; an operator's file holds real secrets. */
function printWelcome(config: Config, boot: Bootstrap, publicUrl: string): void {
  if (!isDemoBootstrap(config.bootstrap)) return
  const demo = boot.clients.find((c) => c.client_secret !== undefined && c.grant_types.includes('client_credentials'))
  if (demo === undefined) return
  console.log(`client ${demo.client_id} (tenant ${demo.tenant}), secret ${demo.client_secret}`)
  console.log(`get a token: curl -s -u '${demo.client_id}:${demo.client_secret}' -d grant_type=client_credentials ${publicUrl}/oauth2/v1/token`)
}

/** `host` as it goes in a URL, and an address of it the local tools can connect to. */
function urlHost(host: string, forClients: boolean): string {
  const h = forClients && host === '0.0.0.0' ? '127.0.0.1' : forClients && host === '::' ? '::1' : host
  return h.includes(':') ? `[${h}]` : h
}

async function main(): Promise<void> {
  // Before any thread starts: a socket stderr moves off descriptor 2 once the relay hands it back.
  await stderrGuarded()
  const argv = process.argv.slice(2)
  if (wantsHelp(argv)) {
    console.log(usage('node dist/src/main.js'))
    return
  }
  // Before anything is created: files 0600, directories 0700 (LMDB's too).
  privateUmask()
  const config = loadConfig(argv, process.env)
  tuneHeap(config.heapGrowthPercent)
  setLogLevel(config.logLevel)
  startLogThread()
  const webhookPolicy = new WebhookPolicy(config.webhookAllow)
  const webhookOptions = deliveryOptions(config.webhookRetryBaseMs, webhookPolicy)
  const clockOffsetFile = useOffsetClockFromEnv(process.env, (p) => readFileSync(p, 'utf8'))
  if (clockOffsetFile !== undefined) log.warn(`warning: CLOCK_OFFSET_FILE is set (tests only): the clock follows the offset in ${clockOffsetFile}`)
  const boot = readBootstrapFile(config.bootstrap)
  // Cluster mode: the KEK file every host shares must be there and well-formed (one start line otherwise); it is never created.
  if (config.cluster !== undefined) readKekFile(config.cluster.kekFile)
  privateDataDir(config.dataDir)
  // Before anything in the directory is opened: a second server would serve stale caches and lose writes.
  const lock = await lockDataDir(config.dataDir, 'the server')
  const opened = openDataDir(config.dataDir, config.masterKeyFile, config.shards, now(), config.shredLog)
  // After the restored-copy check (which needs the original's log): every installation keeps one from its first start.
  ensureShredLog(config.shredLog)
  // Every page read once, in a child process, before this one opens anything: a damaged page refuses the start.
  await verifyEnvironments(environmentsOf(config.dataDir))
  const { manifest, created, masterKey } = opened
  if (!created && manifest.shards !== config.shards && (process.argv.includes('--shards') || process.env.SHARDS !== undefined)) {
    log.info(`note: ${config.dataDir} was created with ${manifest.shards} shards; --shards applies only to a new data directory`)
  }

  let services: Services | undefined
  const server = await listen(() => services, config.host, config.port)
  const boundUrl = `http://${urlHost(config.host, false)}:${server.port}`
  const publicUrl = config.publicUrl ?? boundUrl
  lock.setUrl(`http://${urlHost(config.host, true)}:${server.port}`)

  const authStore = openAuthStore(config.dataDir)
  const hasher = new PasswordHasher()
  const tokens = new AccessTokens(authStore, config.accessTokenTtl)
  const signing = new SigningPool(masterKey)
  const idpSecretKey = identityProviderSecretKey(masterKey)
  const oauth = createOAuthServices(authStore, hasher, tokens, signing, publicUrl, idpSecretKey)
  // The bootstrap file's records and the first signing key: here on one machine; in a cluster by each
  // host that gains the auth lease, through the replicated log (src/cluster/auth-front.ts).
  const prepareAuthStore = async (): Promise<void> => {
    await applyAuthBootstrap(authStore, hasher, boot, deriveKey(masterKey, 'bootstrap secret digest v1'))
    await applyIdentityProviderBootstrap(authStore, boot.identityProviders, idpSecretKey)
    await oauth.keys.ensureActiveKey()
    // Format 1 -> 2 (src/shards/manifest.ts): the refresh-token user index moved to array keys.
    if (opened.formatOnDisk < 2) await oauth.refreshTokens.rebuildUserIndex()
  }
  if (config.cluster === undefined) await prepareAuthStore()
  const metamodel = new Metamodel(boot.metamodel)
  // Cluster mode only: a dynamic import, so that one machine loads nothing of NATS.
  const clusterStart = config.cluster === undefined ? undefined : await import('./cluster/start')
  const clusterConnection = config.cluster === undefined ? undefined : await clusterStart!.connectClusterFront(config.cluster)
  const pool = new ActorPool({
    dataDir: config.dataDir, shardCount: manifest.shards, workerCount: config.workers, actorHeapMb: config.actorHeapMb, publicUrl, metamodel: boot.metamodel, masterKey,
    eventRetentionMs: config.eventRetentionMs, eventRetentionCount: config.eventRetentionCount,
    existing: !created, formatOnDisk: opened.formatOnDisk,
    shredLog: config.shredLog, generation: manifest.generation ?? '', restore: opened.restore,
    cluster: config.cluster,
  })
  await pool.started()
  const cluster = config.cluster === undefined ? undefined : await clusterStart!.startClusterFront(config.cluster, clusterConnection!, pool, manifest.shards)
  const authCluster = config.cluster === undefined ? undefined : await (await import('./cluster/auth-front')).startClusterAuth({ options: config.cluster, store: authStore, tokens, dataDir: config.dataDir, hostUrl: hostUrlOf(config.cluster, publicUrl), prepare: prepareAuthStore })
  recordFormat(config.dataDir, opened)
  if (opened.restore !== undefined) log.info({ dataDir: config.dataDir, shredLog: config.shredLog }, `restored: ${config.dataDir} is a restored backup, the shred log ${config.shredLog} applied; it now serves as an installation of its own`)
  const backupSource = { manifest, authEnv: authStore.env, backupShards: backupShardsThroughActors(pool, manifest.shards) }
  services = {
    publicUrl, urls: new Urls(publicUrl), maxBody: config.maxBody,
    jsonLimits: { maxDepth: config.maxJsonDepth, maxElements: config.maxJsonElements },
    maxStreamsPerTenant: config.maxStreamsPerTenant, streamBuffers: new StreamBuffers(config.maxStreamBufferMb * 1024 * 1024), pool, metamodel, hasher, tokens, oauth,
    webhookPolicy, trustProxy: new AddressSet(config.trustProxy),
    corsOrigins: new Set(config.corsOrigins),
    gateway: new GatewayLimits({ timeoutMs: config.gatewayTimeoutMs, maxConcurrent: config.gatewayMaxConcurrent }),
    backup: (to: string) => takeBackup(backupSource, to),
    operations: { readiness: () => readiness({ pool, authStore, dataDir: config.dataDir, cluster: cluster?.check }), metrics: config.metrics },
    authCluster,
  }
  registerSources(pool, authStore)
  publishSubscriptionEvents(oauth.subscriptionEvents, pool)
  const webhooks = new WebhookDelivery(pool, webhookOptions)
  webhooks.start()
  cluster?.onGained((shards) => webhooks.reload(shards))

  // In a cluster only the auth store's owner writes it (a standby follows the owner's sweeps).
  const sweep = setInterval(() => {
    if (authCluster?.servesHere() !== false) void sweepOAuth(oauth, tokens).catch((err: unknown) => log.error({ err }, 'token sweep failed'))
  }, SWEEP_INTERVAL_MS)
  sweep.unref()

  let stopping = false
  const shutDown = async (signal: string): Promise<void> => {
    log.info(`${signal}: shutting down, answering ${inFlight()} requests in flight`)
    server.stopAccepting()
    clearInterval(sweep)
    webhooks.close()
    if (!(await drain(config.shutdownTimeoutMs))) {
      log.warn(`shutdown: ${inFlight()} requests still unanswered after ${config.shutdownTimeoutMs} ms; closing their connections`)
    }
    server.close()
    await cluster?.close()
    await authCluster?.close()
    await Promise.all([pool.close(), hasher.close(), signing.close()])
    await authStore.env.close()
    lock.release()
  }
  const stop = (signal: string): void => {
    if (stopping) {
      // A second signal: the operator will not wait for the drain (LMDB stays consistent; unanswered requests are cut).
      log.warn(`${signal} again: exiting without waiting for the drain`)
      flushLog()
      process.exit(1)
    }
    stopping = true
    shutDown(signal).then(() => {
      flushLog()
      process.exit(0)
    }, (err: unknown) => {
      log.error({ err }, 'shutdown failed')
      flushLog()
      process.exit(1)
    })
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))

  printWelcome(config, boot, publicUrl)
  // The bound address (with --port 0, the real port); the public URL, when set, on its own line before it.
  if (config.publicUrl !== undefined) console.log(`public url ${publicUrl}`)
  console.log(`listening ${boundUrl}`)
}

// A rejection nobody awaits (lmdb-js's commitError of a failed auth-store
// commit on a full disk, say) must not take every tenant down: log it.
process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled rejection'))

/** A file system call that failed (Node's message names the call, the code and the path): what to fix is in it, not in a stack. */
const fileSystemError = (err: unknown): err is NodeJS.ErrnoException => err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string' && typeof (err as NodeJS.ErrnoException).path === 'string'

// A refused start is one plain line on stderr, for the person at the terminal.
main().catch((err: unknown) => {
  flushLog()
  // Written to the real stderr at once: the relay's copy could come after the exit.
  if (err instanceof ConfigError || err instanceof ShardRefused || fileSystemError(err)) writeSync(stderrFd(), `error: ${err.message}\n`)
  else writeSync(stderrFd(), `${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
