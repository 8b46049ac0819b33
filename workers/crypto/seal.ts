// AES-256-GCM: a fresh 96-bit nonce per seal, the element's identity as
// additional authenticated data, so a sealed value moved to another element
// or altered by one bit does not open.
import { createCipheriv, createDecipheriv } from 'node:crypto'
import { pooledRandomBytes } from '../../src/crypto/random-pool'

const NONCE = 12
const TAG = 16

/** nonce | ciphertext | tag */
export function seal(key: Buffer, plaintext: Buffer | string, aad: Buffer | string): Buffer {
  const nonce = pooledRandomBytes(NONCE)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(typeof aad === 'string' ? Buffer.from(aad) : aad)
  const body = cipher.update(plaintext)
  const final = cipher.final()
  return Buffer.concat([nonce, body, final, cipher.getAuthTag()])
}

/**
 * What identifies a sealed value cheaply: its length, nonce and tag. Two
 * values alike in these but different elsewhere cannot both open under one
 * key (that would be a GCM forgery), so a cache keyed by it never serves
 * what a fresh decrypt would refuse as another value's plaintext.
 */
export function sealedFingerprint(sealed: Uint8Array): string {
  const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.length)
  return `${sealed.length}:${buf.toString('latin1', 0, NONCE)}${buf.toString('latin1', sealed.length - TAG)}`
}

/**
 * `sealedFingerprint(sealed) === f`, without building the string: a cache
 * hit is checked on every read of a cached element (neighbours: once per
 * node and relation), and the string cost more than the rest of the check.
 * `start` and `end` bound the sealed value inside a larger buffer (a stored
 * element's bytes, workers/store/chunk-cache.ts).
 */
export function matchesFingerprint(f: string, sealed: Uint8Array, start = 0, end = sealed.length): boolean {
  const n = end - start
  const at = f.length - NONCE - TAG
  if (n < NONCE + TAG || at < 2 || f.charCodeAt(at - 1) !== 58 /* ':' */) return false
  // The decimal length before the ':', digit by digit from its end, with no digit to spare.
  let rest = n
  for (let i = at - 2; i >= 0; i--) {
    if (rest === 0 || f.charCodeAt(i) !== 48 + (rest % 10)) return false
    rest = Math.floor(rest / 10)
  }
  if (rest !== 0) return false
  // latin1 maps each byte to the char code of its value.
  for (let i = 0; i < NONCE; i++) if (f.charCodeAt(at + i) !== sealed[start + i]) return false
  for (let i = 0; i < TAG; i++) if (f.charCodeAt(at + NONCE + i) !== sealed[end - TAG + i]) return false
  return true
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
