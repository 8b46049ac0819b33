// The gateway's options and its per-service cap on concurrent upstream
// requests (one more is refused with 503 rather than queued: a slow service
// must not hold the front thread's memory).
import { ApiError } from '../core/errors'

export interface GatewayOptions {
  /** how long to wait for a service's response headers, and between two body chunks */
  timeoutMs: number
  /** requests forwarded to one service at once */
  maxConcurrent: number
}

export class GatewayLimits {
  private readonly inFlight = new Map<string, number>()

  constructor(readonly options: GatewayOptions) {}

  /** Takes a slot of `service`; the returned function gives it back (once). */
  acquire(service: string): () => void {
    const n = this.inFlight.get(service) ?? 0
    if (n >= this.options.maxConcurrent) {
      throw new ApiError('service_unavailable', `the service "${service}" already has ${n} requests in flight through the gateway; retry shortly`, { headers: { 'retry-after': '1' } })
    }
    this.inFlight.set(service, n + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.inFlight.get(service) ?? 1) - 1
      if (left === 0) this.inFlight.delete(service)
      else this.inFlight.set(service, left)
    }
  }
}

export interface GatewayServices {
  gateway: GatewayLimits
}
