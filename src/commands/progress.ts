// Progress of a long command-line run on stderr: every few seconds and at the
// end, one line with the counts by kind and the rate, for example
// `exported 120000 lines (consent 10, node 100000, relation 19990) in 12.3 s, 9756 lines/s`.
export class Progress {
  private readonly counts = new Map<string, number>()
  private total = 0
  private readonly started = Date.now()
  private lastPrinted = Date.now()

  constructor(private readonly verb: string, private readonly everyMs = 2000, private readonly print: (line: string) => void = (l) => process.stderr.write(`${l}\n`)) {}

  add(kind: string, n = 1): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + n)
    this.total += n
    if (Date.now() - this.lastPrinted >= this.everyMs) this.report()
  }

  line(): string {
    const seconds = Math.max((Date.now() - this.started) / 1000, 0.001)
    const kinds = [...this.counts].map(([k, n]) => `${k} ${n}`).join(', ')
    return `${this.verb} ${this.total} lines${kinds === '' ? '' : ` (${kinds})`} in ${seconds.toFixed(1)} s, ${Math.round(this.total / seconds)} lines/s`
  }

  report(): void {
    this.lastPrinted = Date.now()
    this.print(this.line())
  }
}

/** The `kind` of an export line, read from its start (the exporter writes it first) without parsing the line. */
export function lineKind(line: string): string {
  return /^\{"kind":"([a-z]+)"/.exec(line)?.[1] ?? 'other'
}
