// Splits a streamed NDJSON body into lines as its chunks arrive, holding at
// most one unfinished line (bounded by `maxLine`) besides the chunks not yet
// taken: a line longer than that is dropped as it streams and reported as
// oversized, so no line of any length sits in memory whole.

/** A complete line (without its "\n" or "\r\n"), or one that was too long and was dropped. Numbers count every line from 1, blank ones too. */
export type SplitLine =
  | { kind: 'line'; number: number; bytes: Buffer }
  | { kind: 'oversized'; number: number }

const NEWLINE = 0x0a
const CR = 0x0d

const isBlank = (b: Buffer): boolean => {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!
    if (c !== 0x20 && c !== 0x09 && c !== CR) return false
  }
  return true
}

export class NdjsonLines {
  /** Bytes received and not yet taken; `pos` is where the next line starts. */
  private buf: Buffer = Buffer.alloc(0)
  private pos = 0
  private number = 0
  /** Set while the rest of an oversized line is dropped. */
  private dropping = false
  /** An oversized line to report once its end has arrived. */
  private pendingOversized = false
  private ended = false

  constructor(private readonly maxLine: number) {}

  /** Appends a chunk (the caller's copy: it is kept until its lines are taken). */
  push(chunk: Buffer): void {
    if (this.ended) return
    if (this.dropping) {
      // Only what follows the oversized line's end is kept.
      const nl = chunk.indexOf(NEWLINE)
      if (nl < 0) return
      this.dropping = false
      chunk = chunk.subarray(nl + 1)
    }
    this.buf = this.pos >= this.buf.length ? chunk : Buffer.concat([this.buf.subarray(this.pos), chunk])
    this.pos = 0
    if (this.buf.indexOf(NEWLINE) < 0 && this.buf.length > this.maxLine) this.startDropping()
  }

  /** No more chunks: what is left becomes the last line. */
  end(): void {
    this.ended = true
  }

  /** Whether the body has ended and every line was taken. */
  get exhausted(): boolean {
    return this.ended && !this.dropping && this.pos >= this.buf.length && !this.pendingOversized
  }

  /** The next complete line, skipping blank ones; undefined until more arrives (or at the end). */
  next(): SplitLine | undefined {
    for (;;) {
      if (this.pendingOversized && !this.dropping) {
        this.pendingOversized = false
        return { kind: 'oversized', number: this.number }
      }
      if (this.pendingOversized && this.ended) {
        // The body ended inside the oversized line.
        this.dropping = false
        continue
      }
      if (this.pos >= this.buf.length) return undefined
      const nl = this.buf.indexOf(NEWLINE, this.pos)
      if (nl < 0 && !this.ended) {
        if (this.buf.length - this.pos > this.maxLine) this.startDropping()
        else return undefined
        continue
      }
      const stop = nl < 0 ? this.buf.length : nl
      const start = this.pos
      this.pos = nl < 0 ? this.buf.length : nl + 1
      this.number++
      if (stop - start > this.maxLine) return { kind: 'oversized', number: this.number }
      const end = stop > start && this.buf[stop - 1] === CR ? stop - 1 : stop
      const bytes = this.buf.subarray(start, end)
      if (!isBlank(bytes)) return { kind: 'line', number: this.number, bytes }
    }
  }

  private startDropping(): void {
    this.number++
    this.pendingOversized = true
    this.dropping = true
    this.buf = Buffer.alloc(0)
    this.pos = 0
  }
}
