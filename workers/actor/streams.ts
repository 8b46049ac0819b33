// Open streams (list and neighbours scans). Each stream has a window of
// STREAM_WINDOW slices: the actor reads the next slice as soon as the window
// has room, one slice per event-loop turn (so the outbox sends each slice
// before the next is read, and other requests are answered in between), and
// the front thread's `more` (sent once it has written a slice and the socket
// drained) opens the window by one. So the scan is not a round trip per
// slice while the socket takes more, and at most STREAM_WINDOW slices of a
// stream are ever in flight.
import type { StreamOp } from '../../src/contract/messages'
import { now } from '../../src/core/clock'
import type { ShardContext } from '../store/context'
import { fail } from '../store/result'
import { ListScan, NeighboursScan, type Scan } from '../store/scans'
import { ExportScan } from '../store/export-scan'
import { SubjectExportScan } from '../store/subject-export'
import type { ShardStore } from '../store/shard-store'
import { internal, reply, type Outbox } from './outbox'
import { StreamBody } from './stream-body'

/** Slices a stream may have in flight before the front thread asks for more. */
export const STREAM_WINDOW = 2

interface OpenStream {
  scan: Scan
  body: StreamBody
  store: ShardStore
  /** slices that may still be sent before the next `more` */
  credit: number
  /** a step is scheduled for the next turn */
  scheduled: boolean
}

export class Streams {
  private readonly open = new Map<number, OpenStream>()

  constructor(private readonly outbox: Outbox, private readonly context: (store: ShardStore, time: number) => ShardContext) {}

  start(id: number, store: ShardStore, op: StreamOp): void {
    let scan: Scan
    if (op.op === 'neighbours') {
      scan = new NeighboursScan(op.tenant, op.node)
    } else if (op.op === 'exportTenant') {
      scan = new ExportScan(op.tenant)
    } else if (op.op === 'exportSubject') {
      scan = new SubjectExportScan(op.tenant, op.subject, op.head)
    } else {
      scan = new ListScan(op.tenant, op.ns, op.type, op.limit, op.owner, op.criterion)
    }
    this.open.set(id, { scan, body: new StreamBody(op.format), store, credit: STREAM_WINDOW, scheduled: false })
    this.pump(id)
  }

  /** The front thread wrote a slice of stream `id` and its socket drained: one more slice may go. */
  step(id: number): void {
    const open = this.open.get(id)
    if (open === undefined) return
    open.credit++
    if (!open.scheduled) this.pump(id)
  }

  cancel(id: number): void {
    this.open.delete(id)
  }

  /** Sends one slice now and schedules the next while the window has room. */
  private pump(id: number): void {
    const open = this.open.get(id)
    if (open === undefined || open.credit <= 0) return
    open.credit--
    try {
      const slice = open.scan.step(this.context(open.store, now()))
      if (slice.notFound !== undefined) {
        this.open.delete(id)
        this.outbox.send(reply(id, fail('element_not_found', slice.notFound)))
        return
      }
      const body = open.body.slice(slice.chunks, slice.done)
      this.outbox.send({ kind: 'chunks', id, body, done: slice.done, kept: slice.kept })
      if (slice.done) {
        this.open.delete(id)
        return
      }
    } catch (err) {
      this.open.delete(id)
      this.outbox.send(internal(id, err))
      return
    }
    if (open.credit <= 0) return
    open.scheduled = true
    setImmediate(() => {
      open.scheduled = false
      this.pump(id)
    })
  }
}
