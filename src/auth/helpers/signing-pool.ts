// The front thread's handle on the piscina pool that generates RSA keys and
// signs ID tokens (workers/crypto/signing-key.ts); the master key goes to the
// workers once, as workerData.
import { Piscina } from 'piscina'
import { join } from 'node:path'
import type { JWTPayload } from 'jose'
import type { GeneratedKey, SigningTask } from '../../../workers/crypto/signing-key'
import { traceTask } from '../../telemetry/traces'
import { TaskGate } from './task-gate'

export type { GeneratedKey }

export interface KeySigner {
  generate(): Promise<GeneratedKey>
  sign(kid: string, sealed: string, claims: JWTPayload): Promise<string>
}

/** The compiled signing worker, from dist/src/auth/helpers/. */
export const SIGNING_WORKER = join(__dirname, '..', '..', '..', 'workers', 'crypto', 'signing-key.js')
const THREADS = 2
/** A task's span (traces on), from its wait at the gate to its answer. */
const SPAN_ATTRIBUTES = { 'profile_graph.pool': 'signing' }

export class SigningPool implements KeySigner {
  private readonly pool: Piscina
  private readonly gate = new TaskGate(THREADS, 'signing')

  constructor(masterKey: Buffer, filename = SIGNING_WORKER) {
    this.pool = new Piscina({ filename, minThreads: 1, maxThreads: THREADS, idleTimeout: 60_000, workerData: { masterKey } })
  }

  async generate(): Promise<GeneratedKey> {
    return (await traceTask('signing generate', SPAN_ATTRIBUTES, () => this.gate.run(() => this.pool.run({ op: 'generate' } satisfies SigningTask)))) as GeneratedKey
  }

  async sign(kid: string, sealed: string, claims: JWTPayload): Promise<string> {
    return (await traceTask('signing sign', SPAN_ATTRIBUTES, () => this.gate.run(() => this.pool.run({ op: 'sign', kid, sealed, claims } satisfies SigningTask)))) as string
  }

  async close(): Promise<void> {
    this.gate.close()
    await this.pool.destroy()
  }
}
