// Open streams (list and neighbours scans): each sends a slice of chunks,
// then waits for the front thread's `more` (its back-pressure) or `cancel`.
import type { StreamOp } from '../../src/contract/messages'
import { now } from '../../src/clock'
import type { ShardContext } from '../store/context'
import { fail } from '../store/result'
import { ListScan, NeighboursScan, type Scan } from '../store/scans'
import { ExportScan } from '../store/export-scan'
import type { ShardStore } from '../store/shard-store'
import { internal, reply, type Outbox } from './outbox'

export class Streams {
  private readonly open = new Map<number, { scan: Scan; store: ShardStore }>()

  constructor(private readonly outbox: Outbox, private readonly context: (store: ShardStore, time: number) => ShardContext) {}

  start(id: number, store: ShardStore, op: StreamOp): void {
    if (op.op === 'neighbours') {
      const scan = new NeighboursScan(op.tenant, op.node)
      if (!scan.sourceExists(this.context(store, now()))) {
        this.outbox.send(reply(id, fail('element_not_found', `node ${op.node.ns}/${op.node.type}/${op.node.id} not found`)))
        return
      }
      this.open.set(id, { scan, store })
    } else if (op.op === 'exportTenant') {
      this.open.set(id, { scan: new ExportScan(op.tenant), store })
    } else {
      this.open.set(id, { scan: new ListScan(op.tenant, op.ns, op.type, op.limit, op.owner, op.criterion), store })
    }
    this.step(id)
  }

  /** The next slice of stream `id`. */
  step(id: number): void {
    const open = this.open.get(id)
    if (open === undefined) return
    try {
      const slice = open.scan.step(this.context(open.store, now()))
      if (slice.done) this.open.delete(id)
      this.outbox.send({ kind: 'chunks', id, chunks: slice.chunks, done: slice.done })
    } catch (err) {
      this.open.delete(id)
      this.outbox.send(internal(id, err))
    }
  }

  cancel(id: number): void {
    this.open.delete(id)
  }
}
