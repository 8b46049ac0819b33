// At most `limit` tasks handed to a piscina pool at once, the rest waiting
// here in order: so the wait before a thread takes a task is measured
// (piscina's own queue tells no task when it started).
import { reportQueueDepth, taskWaited, type PoolName } from '../../telemetry/pool-metrics'

export class TaskGate {
  private running = 0
  private readonly waiting: (() => void)[] = []
  private readonly unreport: () => void

  constructor(private readonly limit: number, private readonly pool: PoolName) {
    this.unreport = reportQueueDepth(pool, () => this.waiting.length)
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    const asked = performance.now()
    if (this.running < this.limit) this.running++
    else await new Promise<void>((resolve) => this.waiting.push(resolve))
    taskWaited(this.pool, (performance.now() - asked) / 1000)
    try {
      return await task()
    } finally {
      // The slot passes to the next task waiting, or is freed.
      const next = this.waiting.shift()
      if (next === undefined) this.running--
      else next()
    }
  }

  close(): void {
    this.unreport()
  }
}
