// A small seeded generator (mulberry32), so the service and the ceiling get
// the same request sequence, run after run.
export type Random = () => number

export function seeded(seed: number): Random {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** An integer in [0, n). */
export const pick = (random: Random, n: number): number => Math.floor(random() * n)
