// A log-linear latency histogram in microseconds (HdrHistogram's layout with
// 64 sub-buckets per power of two): values below 128 µs are exact, larger
// ones are kept within 1/64 (1.6%) of their value. Fixed memory whatever the
// number of samples, so recording costs the same at the end of a run as at
// its start.

const SUB = 64
const EXACT = 2 * SUB
const MAX_SHIFT = 32

export interface LatencySummary {
  /** Milliseconds. */
  p50: number
  p90: number
  p99: number
  p999: number
  max: number
  mean: number
}

export class Histogram {
  private readonly counts = new Float64Array(EXACT + MAX_SHIFT * SUB)
  private total = 0
  private sum = 0
  private maxValue = 0

  get count(): number {
    return this.total
  }

  /** Records one latency, in microseconds. */
  record(us: number): void {
    const v = us < 1 ? 1 : Math.round(us)
    this.counts[Histogram.index(v)]!++
    this.total++
    this.sum += v
    if (v > this.maxValue) this.maxValue = v
  }

  private static index(v: number): number {
    if (v < EXACT) return v
    const shift = Math.min(Math.floor(Math.log2(v)) - 6, MAX_SHIFT)
    return EXACT + (shift - 1) * SUB + (Math.min(Math.floor(v / 2 ** shift), EXACT - 1) - SUB)
  }

  /** The highest value a bucket holds (so percentiles never flatter). */
  private static upper(index: number): number {
    if (index < EXACT) return index
    const shift = Math.floor((index - EXACT) / SUB) + 1
    const sub = ((index - EXACT) % SUB) + SUB
    return (sub + 1) * 2 ** shift - 1
  }

  /** The value at quantile q (0..1), in microseconds; 0 when empty. */
  quantile(q: number): number {
    if (this.total === 0) return 0
    const rank = Math.max(1, Math.ceil(q * this.total))
    let seen = 0
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!
      if (seen >= rank) return Math.min(Histogram.upper(i), this.maxValue)
    }
    return this.maxValue
  }

  summary(): LatencySummary {
    const ms = (us: number): number => Math.round(us) / 1000
    return {
      p50: ms(this.quantile(0.5)),
      p90: ms(this.quantile(0.9)),
      p99: ms(this.quantile(0.99)),
      p999: ms(this.quantile(0.999)),
      max: ms(this.maxValue),
      mean: this.total === 0 ? 0 : ms(this.sum / this.total),
    }
  }
}
