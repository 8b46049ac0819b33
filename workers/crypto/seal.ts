// AES-256-GCM: a fresh 96-bit nonce per seal, the element's identity as
// additional authenticated data, so a sealed value moved to another element
// or altered by one bit does not open.
import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto'

const NONCE = 12
const TAG = 16

// Nonces are drawn from a pool refilled from the CSPRNG in bulk: one
// randomBytes(12) call per write costs more than the cipher itself.
const pool = Buffer.alloc(NONCE * 4096)
let offset = pool.length

function freshNonce(): Buffer {
  if (offset >= pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const nonce = Buffer.from(pool.subarray(offset, offset + NONCE))
  offset += NONCE
  return nonce
}

/** nonce | ciphertext | tag */
export function seal(key: Buffer, plaintext: Buffer | string, aad: Buffer | string): Buffer {
  const nonce = freshNonce()
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(typeof aad === 'string' ? Buffer.from(aad) : aad)
  const body = cipher.update(plaintext)
  const final = cipher.final()
  return Buffer.concat([nonce, body, final, cipher.getAuthTag()])
}

/** The plaintext, or undefined when the key, the data or the identity does not match. */
export function open(key: Buffer, sealed: Uint8Array, aad: Buffer | string): Buffer | undefined {
  if (sealed.length < NONCE + TAG) return undefined
  const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.length)
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(0, NONCE))
    decipher.setAAD(typeof aad === 'string' ? Buffer.from(aad) : aad)
    decipher.setAuthTag(buf.subarray(buf.length - TAG))
    return Buffer.concat([decipher.update(buf.subarray(NONCE, buf.length - TAG)), decipher.final()])
  } catch {
    return undefined
  }
}
