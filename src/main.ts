// Entry: config -> private data directory, locked -> manifest -> listen ->
// auth store and bootstrap -> shard actors -> ready. Prints `listening
// <bound address>` when ready. SIGTERM/SIGINT drain: stop accepting, answer
// what is in flight (bounded), then close the actors and exit.
// First: the relay of descriptor 2, before anything writes there or the log opens (src/telemetry/stderr-guard.ts).
import './telemetry/start-stderr-guard'
import { writeSync } from 'node:fs'
import { stderrFd, stderrGuarded } from './telemetry/stderr-guard'
import { readBootstrapFile } from './bootstrap/bootstrap-file'
import { ConfigError, loadConfig, usage, wantsHelp } from './config/load-config'
import { WebhookPolicy } from './net/webhook-policy'
import { listen } from './app/server'
import type { Services } from './app/services'
import { buildServices, startBackgroundWork } from './app/service-set'
import { shutDownOnSignals } from './app/shut-down'
import { startShards } from './app/start-shards'
import { announce } from './start/announce'
import { openAuth } from './start/auth-parts'
import { openServerData, recordServing } from './start/data-dir-open'
import { privateUmask } from './start/file-modes'
import { startTelemetry, useTestClock } from './start/process-setup'
import { serverUrls } from './start/server-urls'
import { ShardRefused } from './shards/actor-pool'
import { flushLog, log } from './telemetry/log'
import { startTraces } from './telemetry/traces'

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
  startTelemetry(config)
  // Off by default: then nothing of OpenTelemetry loads (docs/design/tracing.md).
  await startTraces(config.traces, 'front', (message) => log.warn(message))
  // A bad allow list refuses the start before anything is opened.
  const webhookPolicy = new WebhookPolicy(config.webhookAllow)
  useTestClock()
  const boot = readBootstrapFile(config.bootstrap)
  const { lock, opened } = await openServerData(config)

  // Listening first: --port 0's port and the default public URL are known before the services are built (503 until then).
  let services: Services | undefined
  const server = await listen(() => services, config.host, config.port)
  const urls = serverUrls(config, server.port)
  lock.setUrl(urls.local)

  const auth = openAuth(config, boot, opened, urls.public)
  if (config.cluster === undefined) await auth.prepare()
  const shards = await startShards(config, boot, opened, urls.public, auth)
  recordServing(config, opened)
  services = buildServices(config, boot, opened, urls.public, webhookPolicy, auth, shards)
  const background = startBackgroundWork(config, webhookPolicy, auth, shards)

  shutDownOnSignals({ server, background, shards, auth, lock, shutdownTimeoutMs: config.shutdownTimeoutMs })
  announce(config, boot, urls)
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
