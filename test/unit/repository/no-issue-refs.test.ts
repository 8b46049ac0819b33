// The code and the documents say what is true without pointing at the
// tracker or the history: no issue numbers ("issue 13", "issues #4") and no
// commit hashes in comments or prose anywhere in the repository's code,
// tests and documents. The dated measurements that do name commits and
// issues live in bench/MEASUREMENTS.md and bench/results/, which this test
// does not read (nor itself: its samples are what it looks for). A third-party
// dependency's provenance may name its source ("upstream commit b8704be"):
// that is a fact about the dependency, not about this repository's history.
import t from 'tap'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { extname, join, relative, resolve } from 'node:path'

const ROOT = resolve(__dirname, '..', '..', '..')
const CHECKED = ['src', 'workers', 'docs', 'README.md', 'bench', 'test', '.ci', 'package.json', '.taprc']
/** The record of dated measurements, the raw results, and this file. */
const NOT_CHECKED = new Set([join(ROOT, 'bench', 'MEASUREMENTS.md'), join(ROOT, 'bench', 'results'), __filename])
const CODE = new Set(['.ts', '.js', '.mjs', '.cjs', '.sh'])
const PROSE = new Set(['.md'])

const ISSUE = /\bissues? #?\d+\b/i
/** "#34" standing alone in prose or a comment (not "PKCS#8", not a colour in a string). */
const HASH_NUMBER = /(?:^|[\s(\[,;])#\d{1,6}\b/
/** Seven to forty hex digits with at least one digit and one letter: a commit's short or full name. */
const HEX_WORD = /\b[0-9a-f]{7,40}\b/g

/** What may stand before a hash that names a dependency's upstream source. */
const UPSTREAM = /\bupstream commit\s*$/i

function looksLikeCommit(word: string): boolean {
  if (!/[0-9]/.test(word) || !/[a-f]/.test(word)) return false // a number, or an English word made of a-f
  if (/^\d+d$/.test(word)) return false // a duration in days ("99999999d")
  return true
}

function filesUnder(path: string): string[] {
  if (NOT_CHECKED.has(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path).sort().flatMap((name) => filesUnder(join(path, name)))
}

/** The comment text of a line of code: a whole-line comment, or what follows " // " or " # " after code. */
function commentOf(line: string, ext: string): string | undefined {
  const trimmed = line.trimStart()
  if (ext === '.sh') {
    if (trimmed.startsWith('#')) return trimmed
    const at = line.indexOf(' # ')
    return at < 0 ? undefined : line.slice(at)
  }
  if (trimmed.startsWith('//') || trimmed.startsWith('/*') || trimmed.startsWith('*')) return trimmed
  const at = line.indexOf(' // ')
  return at < 0 ? undefined : line.slice(at)
}

/** The prose of a document: fenced code blocks left out. Inline code spans stay: a hash in backticks is still a hash. */
function proseLines(text: string): (string | undefined)[] {
  let fenced = false
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced
      return undefined
    }
    return fenced ? undefined : line
  })
}

interface Finding { where: string; what: string }

function scan(file: string): Finding[] {
  const ext = extname(file)
  if (!CODE.has(ext) && !PROSE.has(ext)) return []
  const text = readFileSync(file, 'utf8')
  const lines = text.split('\n')
  const prose = PROSE.has(ext) ? proseLines(text) : lines.map((line) => commentOf(line, ext))
  const found: Finding[] = []
  const where = (i: number): string => `${relative(ROOT, file)}:${i + 1}`
  lines.forEach((line, i) => {
    // An issue reference is one anywhere in the file, code strings included.
    const issue = ISSUE.exec(line)
    if (issue !== null) found.push({ where: where(i), what: issue[0] })
    const comment = prose[i]
    if (comment === undefined) return
    const number = HASH_NUMBER.exec(comment)
    if (number !== null) found.push({ where: where(i), what: number[0].trim() })
    for (const match of comment.matchAll(HEX_WORD)) {
      const before = `${prose[i - 1] ?? ''} ${comment.slice(0, match.index)}`
      if (looksLikeCommit(match[0]) && !UPSTREAM.test(before)) found.push({ where: where(i), what: match[0] })
    }
  })
  return found
}

t.test('the matchers', async (t) => {
  for (const ref of ['issue 13', 'Issue #16', '(issue 16, item 4)', 'issues 4 and 5']) t.match(ref, ISSUE, ref)
  for (const fine of ['tissue 3', 'the issue time', 'issued 3 tokens']) t.notMatch(fine, ISSUE, fine)
  for (const ref of ['see #34', '(#34)']) t.match(ref, HASH_NUMBER, ref)
  for (const fine of ['PKCS#8', 'color:#374151', '[link](#section-2)']) t.notMatch(fine, HASH_NUMBER, fine)
  for (const hash of ['9ab4a73', '1558094a', 'e24aee1', 'f2772d8e0a9c3b1d2e4f5a6b7c8d9e0f1a2b3c4d']) t.ok(looksLikeCommit(hash), hash)
  for (const fine of ['1048576', 'defaced', '99999999d']) t.notOk(looksLikeCommit(fine), fine)
  t.equal(commentOf("  const url = 'http://example.test' // since 9ab4a73", '.ts'), " // since 9ab4a73")
  t.equal(commentOf("  const url = 'http://example.test/abc1234'", '.ts'), undefined)
  t.match('its source_commit file names upstream commit ', UPSTREAM)
  t.notMatch('the code of commit ', UPSTREAM)
  t.same(proseLines('a\n```\nabc1234\n```\nb'), ['a', undefined, undefined, undefined, 'b'])
})

t.test('no issue numbers or commit hashes in the code, the tests and the documents', async (t) => {
  const files = CHECKED.flatMap((p) => filesUnder(join(ROOT, p)))
  t.ok(files.length > 100, `${files.length} files read`)
  const found = files.flatMap(scan).map(({ where, what }) => `${where}: ${what}`)
  t.strictSame(found, [], 'say the fact, not the issue or the commit it came from')
})
