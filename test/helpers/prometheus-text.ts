// A strict parser of the Prometheus text exposition format (0.0.4), for
// checking what GET /metrics serves the way a scraper reads it: every line
// well formed, every sample of a declared family, no series twice, histogram
// buckets cumulative and ending at +Inf = _count. It throws on the first fault.

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Family {
  name: string
  type: string
  help: string | undefined
  samples: Sample[]
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count', ''], counter: ['', '_total'], gauge: [''], untyped: [''] }

function parseValue(raw: string, line: string): number {
  if (raw === '+Inf') return Infinity
  if (raw === '-Inf') return -Infinity
  // prom-client writes NaN as `Nan` (an event-loop lag mean with no sample since the last scrape); Prometheus reads NaN in any case.
  if (/^nan$/i.test(raw)) return NaN
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`bad value "${raw}" in: ${line}`)
  return Number(raw)
}

/** `{a="x",b="y\"z"}` from position `i` (at the `{`); returns the labels and the position after `}`. */
function parseLabels(line: string, i: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {}
  i++
  while (line[i] !== '}') {
    const eq = line.indexOf('=', i)
    if (eq === -1) throw new Error(`bad labels in: ${line}`)
    const name = line.slice(i, eq)
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name "${name}" in: ${line}`)
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`)
    if (line[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`)
    let j = eq + 2
    let value = ''
    for (; j < line.length && line[j] !== '"'; j++) {
      if (line[j] === '\\') {
        const next = line[++j]
        if (next === 'n') value += '\n'
        else if (next === '\\' || next === '"') value += next
        else throw new Error(`bad escape in: ${line}`)
      } else value += line[j]
    }
    if (j >= line.length) throw new Error(`unterminated label value in: ${line}`)
    labels[name] = value
    i = j + 1
    if (line[i] === ',') i++
    else if (line[i] !== '}') throw new Error(`expected , or } in: ${line}`)
  }
  return { labels, end: i + 1 }
}

function familyOf(families: Map<string, Family>, sample: string): Family | undefined {
  for (const [name, f] of families) {
    for (const suffix of SUFFIXES[f.type]!) if (sample === name + suffix) return f
  }
  return undefined
}

function checkHistograms(families: Map<string, Family>): void {
  for (const f of families.values()) {
    if (f.type !== 'histogram') continue
    const series = new Map<string, { buckets: [number, number][]; count: number | undefined }>()
    for (const s of f.samples) {
      const { le, ...rest } = s.labels
      const key = JSON.stringify(Object.entries(rest).sort())
      const entry = series.get(key) ?? { buckets: [], count: undefined }
      series.set(key, entry)
      if (s.name === `${f.name}_bucket`) {
        if (le === undefined) throw new Error(`${f.name}_bucket without le`)
        entry.buckets.push([parseValue(le, s.name), s.value])
      } else if (s.name === `${f.name}_count`) entry.count = s.value
    }
    for (const [key, { buckets, count }] of series) {
      const last = buckets[buckets.length - 1]
      if (last === undefined || last[0] !== Infinity) throw new Error(`${f.name} ${key}: no +Inf bucket`)
      buckets.forEach(([le, n], i) => {
        if (i > 0 && (le <= buckets[i - 1]![0] || n < buckets[i - 1]![1])) throw new Error(`${f.name} ${key}: buckets not cumulative`)
      })
      if (count !== last[1]) throw new Error(`${f.name} ${key}: +Inf bucket ${last[1]} != _count ${count}`)
    }
  }
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>()
  const seen = new Set<string>()
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline')
  for (const line of text.split('\n')) {
    if (line === '') continue
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line)
      if (m === null) continue
      const [, kind, name, rest] = m
      if (!NAME.test(name!)) throw new Error(`bad metric name in: ${line}`)
      const f = families.get(name!) ?? { name: name!, type: 'untyped', help: undefined, samples: [] }
      if (kind === 'TYPE') {
        if (!TYPES.has(rest!)) throw new Error(`bad type in: ${line}`)
        if (f.samples.length > 0) throw new Error(`TYPE after samples in: ${line}`)
        f.type = rest!
      } else f.help = rest
      families.set(name!, f)
      continue
    }
    const nameEnd = line.search(/[{ ]/)
    if (nameEnd === -1) throw new Error(`no value in: ${line}`)
    const name = line.slice(0, nameEnd)
    if (!NAME.test(name)) throw new Error(`bad sample name in: ${line}`)
    let labels: Record<string, string> = {}
    let i = nameEnd
    if (line[i] === '{') ({ labels, end: i } = parseLabels(line, i))
    if (line[i] !== ' ') throw new Error(`expected a space before the value in: ${line}`)
    const parts = line.slice(i + 1).split(' ')
    if (parts.length > 2 || (parts.length === 2 && !/^-?\d+$/.test(parts[1]!))) throw new Error(`bad value or timestamp in: ${line}`)
    const value = parseValue(parts[0]!, line)
    const family = familyOf(families, name)
    if (family === undefined) throw new Error(`sample of no declared family: ${line}`)
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`
    if (seen.has(key)) throw new Error(`series twice: ${line}`)
    seen.add(key)
    family.samples.push({ name, labels, value })
  }
  checkHistograms(families)
  return families
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function total(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  let sum = 0
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value
    }
  }
  return sum
}
