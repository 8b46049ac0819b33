// Data keys live in fixed slots of a key file, not in LMDB: LMDB never
// overwrites in place and does not zero freed pages, so a key deleted there
// may survive in the file. Destroying a slot here overwrites its bytes with
// zeros in place and syncs, which is what crypto-shredding needs.
import { closeSync, fsyncSync, openSync, readSync, writeSync, existsSync } from 'node:fs'

/** One slot: a wrapped 32-byte key (12 nonce + 32 ciphertext + 16 tag) padded to 64. */
export const SLOT_BYTES = 64
export const WRAPPED_BYTES = 60

export class KeyFile {
  private readonly fd: number

  /** `readOnly`: a thread that reads another actor's shard never writes its key file. */
  constructor(readonly path: string, readOnly = false) {
    this.fd = openSync(path, readOnly ? 'r' : existsSync(path) ? 'r+' : 'w+', 0o600)
  }

  write(slot: number, wrapped: Buffer): void {
    if (wrapped.length !== WRAPPED_BYTES) throw new Error(`a wrapped key is ${WRAPPED_BYTES} bytes`)
    const buf = Buffer.alloc(SLOT_BYTES)
    wrapped.copy(buf)
    writeSync(this.fd, buf, 0, SLOT_BYTES, slot * SLOT_BYTES)
    fsyncSync(this.fd)
  }

  /** The wrapped key, or undefined when the slot was destroyed or never written. */
  read(slot: number): Buffer | undefined {
    const buf = Buffer.alloc(SLOT_BYTES)
    const n = readSync(this.fd, buf, 0, SLOT_BYTES, slot * SLOT_BYTES)
    if (n < SLOT_BYTES) return undefined
    const wrapped = buf.subarray(0, WRAPPED_BYTES)
    return wrapped.every((b) => b === 0) ? undefined : wrapped
  }

  destroy(slot: number): void {
    writeSync(this.fd, Buffer.alloc(SLOT_BYTES), 0, SLOT_BYTES, slot * SLOT_BYTES)
    fsyncSync(this.fd)
  }

  close(): void {
    closeSync(this.fd)
  }
}
