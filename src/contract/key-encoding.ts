// The key encoding of every LMDB database (the auth store and the shards).
// It is lmdb-js's default (ordered-binary) with one change: ordered-binary
// escapes the characters U+0000-U+0004 only in strings shorter than 64
// characters and writes longer ones as raw UTF-8, so a long string holding
// a NUL reads back as two array elements, breaks prefix ranges, and loses
// lone surrogates. Here every string, whatever its length, is written the
// way ordered-binary writes its short ones, which its reader already reads.
// Strings without U+0000-U+0004 and lone surrogates get the very bytes
// ordered-binary gave them, so data stored before needs no migration.
//
// Order: strings by code point, arrays element by element (a shorter array
// before its extensions), so [...prefix] to [...prefix, KEY_END] is exactly
// the keys that start with `prefix`.
import type { DatabaseOptions } from 'lmdb'
import { enableNullTermination, readKey, writeKey as writeScalar } from 'ordered-binary'

/** LMDB's maximum key size with lmdb-js's default page size. */
export const MAX_KEY_BYTES = 1978

/** Sorts after every string and number, so [...prefix, KEY_END] closes a prefix range. */
export const KEY_END = Buffer.from([0xff])

export type KeyPart = string | number | Uint8Array
export type StoreKey = KeyPart | KeyPart[]

/** A string's first character below 28 gets this marker (ordered-binary's rule). */
const STRING_MARK = 27
/** U+0000-U+0004 are written as ESCAPE followed by the character. */
const ESCAPE = 4
/** Separates the elements of an array key. */
const SEPARATOR = 0

function writeString(s: string, target: Uint8Array, start: number): number {
  let p = start
  if (!(s.charCodeAt(0) >= 28)) target[p++] = STRING_MARK
  // Fast path, same bytes: while the target surely has room (at most 3 bytes
  // a UTF-16 unit, plus the 4 of null termination), plain ASCII needs no checks.
  if (p + s.length * 3 + 4 <= target.length) {
    let i = 0
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i)
      if (c <= ESCAPE || c >= 0x80) break
      target[p++] = c
    }
    if (i === s.length) return p
    return writeRest(s, i, target, p)
  }
  return writeRest(s, 0, target, p)
}

function writeRest(s: string, from: number, target: Uint8Array, start: number): number {
  let p = start
  for (let i = from; i < s.length; i++) {
    let c = s.charCodeAt(i)
    if (c <= ESCAPE) {
      target[p++] = ESCAPE
      target[p++] = c
    } else if (c < 0x80) {
      target[p++] = c
    } else if (c < 0x800) {
      target[p++] = (c >> 6) | 0xc0
      target[p++] = (c & 0x3f) | 0x80
    } else if ((c & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      c = 0x10000 + ((c & 0x3ff) << 10) + (s.charCodeAt(++i) & 0x3ff)
      target[p++] = (c >> 18) | 0xf0
      target[p++] = ((c >> 12) & 0x3f) | 0x80
      target[p++] = ((c >> 6) & 0x3f) | 0x80
      target[p++] = (c & 0x3f) | 0x80
    } else {
      // Also a lone surrogate, as three bytes: it reads back unchanged.
      target[p++] = (c >> 12) | 0xe0
      target[p++] = ((c >> 6) & 0x3f) | 0x80
      target[p++] = (c & 0x3f) | 0x80
    }
    // Typed arrays drop writes past their end; lmdb-js retries a RangeError with a bigger buffer or reports the key too large.
    if (p > target.length - 4) throw new RangeError('key does not fit in target buffer')
  }
  return p
}

function writePart(part: unknown, target: Uint8Array, start: number): number {
  if (typeof part === 'string') return writeString(part, target, start)
  if (Array.isArray(part)) {
    let p = start
    for (let i = 0; i < part.length; i++) {
      if (i > 0) target[p++] = SEPARATOR
      p = writePart(part[i], target, p)
    }
    return p
  }
  return writeScalar(part as KeyPart, target, start, true)
}

/**
 * lmdb-js's `writeKey`. Like ordered-binary with null termination (which
 * lmdb-js turns on, and its fast comparator relies on), four zero bytes
 * follow the key without being part of it.
 */
function writeKey(key: unknown, target: Uint8Array, start: number): number {
  if (typeof key !== 'string' && !Array.isArray(key)) return writeScalar(key as KeyPart, target, start)
  const end = writePart(key, target, start)
  if (end + 4 > target.length) throw new RangeError('key does not fit in target buffer')
  target.fill(0, end, end + 4)
  return end
}

/** The `keyEncoder` option for every `openDB`. */
export const KEY_ENCODER = { writeKey, readKey, enableNullTermination }

/** lmdb-js's typings list `keyEncoder` for the root environment only; `openDB` takes it too. */
export const KEY_OPTIONS: DatabaseOptions & { keyEncoder: typeof KEY_ENCODER } = { keyEncoder: KEY_ENCODER }

/** The encoded bytes of a key (tests, and the budget of documented limits). */
export function encodeKey(key: StoreKey): Buffer {
  const target = Buffer.alloc(16384)
  return target.subarray(0, writeKey(key, target, 0))
}

export function decodeKey(bytes: Uint8Array): StoreKey {
  return readKey(bytes, 0, bytes.length) as StoreKey
}

/**
 * What a string takes inside a key, not counting the one-byte marker some
 * strings get: its UTF-8 bytes, U+0000-U+0004 counting two. Input limits
 * are measured this way, so a limit that fits the key budget always fits.
 */
export function keyPartBytes(s: string): number {
  let n = Buffer.byteLength(s)
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) <= ESCAPE) n++
  return n
}
