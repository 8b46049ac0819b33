// Random bytes for hot paths (token per /token call, nonce per sealed write),
// drawn from a buffer refilled from the CSPRNG in bulk: one small
// randomBytes call per request costs more than what the bytes are used for.
// Each byte is handed out once.
import { randomFillSync } from 'node:crypto'

const pool = Buffer.alloc(64 * 1024)
let offset = pool.length

/** `n` fresh random bytes (n at most 64 KiB) in a buffer of their own. */
export function pooledRandomBytes(n: number): Buffer {
  if (offset + n > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const bytes = Buffer.from(pool.subarray(offset, offset + n))
  offset += n
  return bytes
}
