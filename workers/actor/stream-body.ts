// A stream's slices rendered as the bytes the front thread writes unchanged
// (src/front/stream.ts): a JSON array opened by the first slice and closed
// by the last, or one item per line. Rendered here, where the items are, and
// handed over as one buffer by transfer: a structured clone of a slice's
// item strings was about a fifth of a neighbours read's actor time.
import type { StreamFormat } from '../../src/contract/messages'

const encoder = new TextEncoder()

export class StreamBody {
  private items = 0
  private opened = false

  constructor(private readonly format: StreamFormat) {}

  /** The bytes of the next slice; `done` marks the last one. */
  slice(chunks: readonly string[], done: boolean): Uint8Array {
    let text: string
    if (this.format === 'ndjson') text = chunks.length === 0 ? '' : chunks.join('\n') + '\n'
    else {
      text = this.opened ? '' : '['
      if (chunks.length > 0) text += (this.items === 0 ? '' : ',') + chunks.join(',')
      if (done) text += ']'
    }
    this.opened = true
    this.items += chunks.length
    return encoder.encode(text)
  }
}

/** The buffer to transfer with `bytes`, when it holds nothing else (TextEncoder makes its own). */
export function transferable(bytes: Uint8Array): ArrayBuffer | undefined {
  const buffer = bytes.buffer
  return buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength ? buffer : undefined
}
