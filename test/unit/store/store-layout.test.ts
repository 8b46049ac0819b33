// The shard's disk format stays in two files: every stored value type in
// workers/store/schema.ts, every key built or decoded in workers/store/keys.ts;
// and workers/store has no import cycles (type imports included), so each
// module can be read and tested on its own.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const DIR = resolve(__dirname, '../../../workers/store')
const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'))
const source = (f: string): string => readFileSync(join(DIR, f), 'utf8')

/** Local imports of each module of workers/store, `import type` too. */
function imports(f: string): string[] {
  return [...source(f).matchAll(/^import (?:type )?[^;]*? from '\.\/([\w-]+)'/gm)].map((m) => `${m[1]}.ts`)
}

t.test('workers/store has no import cycles', async (t) => {
  const cycles: string[] = []
  const visit = (f: string, path: string[]): void => {
    for (const dep of imports(f)) {
      if (path.includes(dep)) cycles.push([...path.slice(path.indexOf(dep)), dep].join(' -> '))
      else visit(dep, [...path, dep])
    }
  }
  for (const f of files) visit(f, [f])
  t.same([...new Set(cycles)], [])
})

t.test('every stored value type is declared in schema.ts only', async (t) => {
  const stored = ['ElementMeta', 'StoredElement', 'ConsentRecord', 'StoredEvent', 'EventHead', 'ScheduleEntry', 'WebhookRecord', 'ShardValues']
  for (const f of files) {
    const declared = stored.filter((name) => new RegExp(`^export (interface|type) ${name}\\b`, 'm').test(source(f)))
    t.same(declared, f === 'schema.ts' ? stored : [], f)
  }
})

t.test('keys are decoded only in keys.ts: no casts of keys to tuples or END ranges elsewhere', async (t) => {
  for (const f of files.filter((x) => x !== 'keys.ts' && x !== 'schema.ts')) {
    const text = source(f)
    t.notMatch(text, /\bkey\w* as \[/, `${f}: no tuple casts of keys`)
    t.notMatch(text, /\bEND\b/, `${f}: ranges come from keys.ts`)
    t.notMatch(text, /\bkeyParts\b/, `${f}: one-element keys are read in keys.ts`)
    t.notMatch(text, /'\w+' in /, `${f}: results are told apart by kind, not by their fields`)
  }
})
