// A streamed request body whose reader is set at once (uWebSockets.js hands
// a body only to a reader set while its handler runs) but whose consumer
// comes later: once the bearer token's verdict is in (a cluster host asks
// the authorization service's owner over NATS). Until then the socket is
// paused and what arrived is kept, at most what the socket had already
// read; the consumer then gets it in order, and every chunk after it.
import type { Exchange } from './exchange'

/** Gets each chunk (a copy, the consumer's to keep) and whether it is the body's last. */
export type ChunkReader = (chunk: Buffer, isLast: boolean) => void

export class BodyIntake {
  private kept: Buffer[] = []
  private keptLast = false
  private reader: ChunkReader | undefined
  private paused = false
  private dropped = false

  constructor(private readonly ex: Exchange) {
    ex.res.onData((chunk, isLast) => {
      // After the answer too (uWebSockets.js reads the rest of the body): dropped, the response is not touched.
      if (this.dropped) return
      // uWebSockets.js reclaims the chunk when this returns.
      const copy = Buffer.from(chunk.slice(0))
      if (this.reader !== undefined) {
        this.reader(copy, isLast)
        return
      }
      this.kept.push(copy)
      if (isLast) this.keptLast = true
      else if (!this.paused) {
        this.paused = true
        ex.res.pause()
      }
    })
  }

  /** Hands the body to `reader`: what was kept, then each chunk as it arrives. */
  read(reader: ChunkReader): void {
    if (this.dropped || this.reader !== undefined) throw new Error('the body is already read or dropped')
    this.reader = reader
    // Resumed first: the reader pauses the socket again if it takes no more.
    this.unpause()
    const kept = this.kept
    this.kept = []
    for (let i = 0; i < kept.length; i++) reader(kept[i]!, this.keptLast && i === kept.length - 1)
  }

  /**
   * The body will not be read (the request is refused before its route
   * takes it): the socket is resumed before the answer, else the
   * connection's next request would never be read, and the rest is dropped.
   * Once a reader has the body, it is the reader's to end.
   */
  drop(): void {
    if (this.reader !== undefined) return
    this.dropped = true
    this.kept = []
    this.unpause()
  }

  private unpause(): void {
    if (!this.paused) return
    this.paused = false
    if (!this.ex.aborted) this.ex.res.resume()
  }
}
