// A stream's slices rendered as the text the front thread writes unchanged
// (src/http/stream.ts): a JSON array opened by the first slice and closed
// by the last, or one item per line. Rendered here, where the items are, as
// one flat string per slice: a structured clone copies a flat one-byte
// string in one move (a clone of the slice's chunks walked each one's
// string tree, a fifth of a neighbours read's actor time). Bytes moved by
// transfer were tried: each answer's ArrayBuffer counted as external memory
// in the front thread, which then ran a full mark-compact every ~60 ms
// (bench/MEASUREMENTS.md, "Neighbours kept whole while the shard is not
// written", 2026-11-26).
import type { StreamFormat } from '../../src/contract/messages'

export class StreamBody {
  private items = 0
  private opened = false

  constructor(private readonly format: StreamFormat) {}

  /** The text of the next slice; `done` marks the last one. */
  slice(chunks: readonly string[], done: boolean): string {
    let text: string
    if (this.format === 'ndjson') text = chunks.length === 0 ? '' : chunks.join('\n') + '\n'
    else {
      text = this.opened ? '' : '['
      if (chunks.length > 0) text += (this.items === 0 ? '' : ',') + chunks.join(',')
      if (done) text += ']'
    }
    this.opened = true
    this.items += chunks.length
    return text
  }
}
