// SIGTERM/SIGINT drain: stop accepting, answer what is in flight (bounded),
// then close the actors (in a cluster: hand their shards over), then the
// cluster connections, and exit; a second signal exits at once.
import { drain, inFlight } from '../http/in-flight'
import type { DataDirLock } from '../start/data-dir-lock'
import type { AuthParts } from '../start/auth-parts'
import { flushLog, log } from '../telemetry/log'
import { stopTraces } from '../telemetry/traces'
import type { Listening } from './server'
import type { BackgroundWork } from './service-set'
import type { RunningShards } from './start-shards'

export interface Running {
  server: Listening
  background: BackgroundWork
  shards: RunningShards
  auth: AuthParts
  lock: DataDirLock
  shutdownTimeoutMs: number
}

async function shutDown(signal: string, r: Running): Promise<void> {
  log.info(`${signal}: shutting down, answering ${inFlight()} requests in flight`)
  r.server.stopAccepting()
  r.background.stop()
  if (!(await drain(r.shutdownTimeoutMs))) {
    log.warn(`shutdown: ${inFlight()} requests still unanswered after ${r.shutdownTimeoutMs} ms; closing their connections`)
  }
  r.server.close()
  // In a cluster the actors hand their shards over first, while this host still answers the calls other hosts
  // forward: each is served, or refused as not run once its shard is handed over (the sender goes on to the next owner).
  await r.shards.pool.close()
  await r.shards.cluster?.close()
  await r.shards.authCluster?.close()
  await Promise.all([r.auth.hasher.close(), r.auth.signing.close()])
  await r.auth.authStore.env.close()
  // The front thread's last spans (the actors sent theirs as they closed).
  await stopTraces()
  r.lock.release()
}

export function shutDownOnSignals(r: Running): void {
  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) {
      // A second signal: the operator will not wait for the drain (LMDB stays consistent; unanswered requests are cut).
      log.warn(`${signal} again: exiting without waiting for the drain`)
      flushLog()
      process.exit(1)
    }
    stopping = true
    shutDown(signal, r).then(() => {
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
}
