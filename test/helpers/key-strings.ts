// A small seeded generator of strings for the key property tests: every
// kind of character the key encoding treats apart (NUL and U+0001-U+0005,
// the marker range below 28, 1- to 4-byte UTF-8, lone surrogates) and the
// ones URLs treat apart ('%', '/'), plus a model of the order keys must have.
import { keyPartBytes } from '../../src/contract/key-encoding'

/** mulberry32: small, fast, and the same sequence for the same seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

export const ATOMS: readonly string[] = [
  'a', 'z', 'A', '0', '9', '%', '%2F', '/', '-', '_', '.', ' ', '~', '@', '+',
  '\u0000', '\u0001', '\u0002', '\u0003', '\u0004', '\u0005', '\u001b', '\u001c', '\u007f',
  '\u0080', 'é', '\u07ff', '\u0800', '中', '\ud7ff', '\ue000', '\uffff',
  '😀', '\u{10ffff}', '\ud800', '\udbff', '\udc00', '\udfff',
]

export function pick<T>(rnd: () => number, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)]!
}

/** A random string that takes at most `maxBytes` in a key, growing towards it. */
export function randomString(rnd: () => number, maxBytes: number, atoms: readonly string[] = ATOMS): string {
  let s = ''
  for (let tries = 0; tries < 4 * maxBytes + 8; tries++) {
    const next = s + pick(rnd, atoms)
    if (keyPartBytes(next) <= maxBytes) s = next
    if (keyPartBytes(s) === maxBytes) break
  }
  return s
}

/** A string that takes exactly `bytes` in a key (padded with 'a' when the atoms overshoot). */
export function stringOfBytes(rnd: () => number, bytes: number): string {
  const s = randomString(rnd, bytes)
  return s + 'a'.repeat(bytes - keyPartBytes(s))
}

/** A variant of `s` that shares a prefix with it: cut, extended, or one atom changed. */
export function neighbourOf(rnd: () => number, s: string): string {
  const cut = s.slice(0, Math.floor(rnd() * (s.length + 1)))
  switch (Math.floor(rnd() * 4)) {
    case 0: return cut
    case 1: return s + pick(rnd, ATOMS)
    case 2: return cut + pick(rnd, ATOMS) + s.slice(cut.length + 1)
    default: return s
  }
}

/** Code point order; a lone surrogate counts as its own code unit (which is where the encoding puts it). */
export function compareStrings(a: string, b: string): number {
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i)!
    const cb = b.codePointAt(j)!
    if (ca !== cb) return ca < cb ? -1 : 1
    i += ca > 0xffff ? 2 : 1
    j += cb > 0xffff ? 2 : 1
  }
  return (a.length - i > 0 ? 1 : 0) - (b.length - j > 0 ? 1 : 0)
}

export type ModelKey = (string | number)[]

/** Element by element; a key sorts before its own extensions. */
export function compareKeys(a: ModelKey, b: ModelKey): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!
    const y = b[i]!
    const c = typeof x === 'number' && typeof y === 'number' ? Math.sign(x - y) : compareStrings(String(x), String(y))
    if (c !== 0) return c
  }
  return Math.sign(a.length - b.length)
}

export function startsWith(key: ModelKey, prefix: ModelKey): boolean {
  return prefix.length <= key.length && prefix.every((p, i) => p === key[i])
}
