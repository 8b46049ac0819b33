// The actor's log records go to the front thread's log (src/telemetry/log.ts) as
// messages, so that there is one log, in order, with the request ids of the
// calls a record concerns. console.error and console.warn of the actor's
// code (and of lmdb-js) are routed here too.
import { format } from 'node:util'
import type { ActorReply } from '../../src/contract/messages'

type Send = (r: ActorReply) => void
let send: Send | undefined

function record(level: 'error' | 'warn' | 'info', args: unknown[], requests: number[]): void {
  const errors = args.filter((a): a is Error => a instanceof Error)
  const message = format(...args.filter((a) => !(a instanceof Error))).replace(/:\s*$/, '')
  const error = errors.length === 0 ? undefined : errors.map((e) => e.stack ?? e.message).join('\n')
  if (send === undefined) process.stderr.write(`${message}${error === undefined ? '' : ` ${error}`}\n`)
  else send({ kind: 'log', id: 0, level, message, error, requests })
}

/** From now on the actor's log records are sent with `sender` (the outbox). */
export function logThrough(sender: Send): void {
  send = sender
  console.error = (...args: unknown[]) => record('error', args, [])
  console.warn = (...args: unknown[]) => record('warn', args, [])
}

/** A routine record (a shard's ownership changing hands): info, not an operator's concern. */
export function logInfo(message: string): void {
  record('info', [message], [])
}

/** A record an operator may want to look at, though the actor carries on. */
export function logWarning(message: string, err: unknown): void {
  record('warn', err === undefined ? [message] : [message, err], [])
}

/** An error that concerns the calls `requests` (their request ids are logged with it). */
export function logError(message: string, err: unknown, requests: number[]): void {
  record('error', [message, err], requests)
}
