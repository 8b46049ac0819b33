// The tenant import command:
//
//   node dist/src/import-tenant.js --tenant demo [--file demo.ndjson] [--data-dir ./data | --server-url URL]
//     --admin-client-id ID [ADMIN_CLIENT_SECRET=...] [--operations]
//
// Reads an export (export-tenant.js) line by line and posts it in batches of
// bounded size to POST /graph/v1/{tenant}/import of the running server,
// which seals the data again under its own keys; progress lines on stderr.
// Batches are applied in order, each whole or not at all; what exists
// already is kept, so an interrupted import can be run again.
//
// With --operations the input is bulk write lines instead (what an enricher
// sends, docs/manual/graph-api.md, *Bulk writes*), streamed unread as the
// body of one POST /graph/v1/{tenant}/bulk?answers=errors, so memory stays
// bounded whatever the file's size. Each line is applied on its own: the
// failed ones are named on stderr (`line 3: 400 ...`), the server's count on
// stdout, and the exit code is 1 when a line failed or the answer was cut short.
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { ConfigError, usage, wantsHelp } from '../config/load-config'
import { answerOf, callServer, errorMessage, reach, tenantEndpoint } from './admin-client'
import { AnswerLines } from './answer-lines'
import { lineKind, Progress } from './progress'

/** Lines per request, and bytes: well under the server's default MAX_BODY (1 MiB). */
const BATCH_LINES = 500
const BATCH_BYTES = 256 * 1024

type Endpoint = Awaited<ReturnType<typeof tenantEndpoint>>

/** An export file, in batches to POST /graph/v1/{tenant}/import; whether all of it went in (a refusal throws). */
async function importExport({ config, url: importUrl, auth }: Endpoint): Promise<boolean> {
  const progress = new Progress('imported')
  let added = 0
  let existing = 0
  let batch: string[] = []
  let bytes = 0
  const send = async (): Promise<void> => {
    if (batch.length === 0) return
    const r = await callServer(importUrl, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: `[${batch.join(',')}]` }) as { added: number; existing: number }
    added += r.added
    existing += r.existing
    for (const line of batch) progress.add(lineKind(line))
    batch = []
    bytes = 0
  }
  const input = createInterface({ input: config.file === undefined ? process.stdin : createReadStream(config.file), crlfDelay: Infinity })
  for await (const line of input) {
    if (line.trim() === '') continue
    batch.push(line)
    bytes += line.length
    if (batch.length >= BATCH_LINES || bytes >= BATCH_BYTES) await send()
  }
  await send()
  progress.report()
  console.log(`imported: ${added} added, ${existing} already there`)
  return true
}

/** What has been read of the operations file: its lines that are not blank (the server skips those and counts the rest), and why reading it stopped, if it failed. */
interface Sent {
  lines: number
  error: Error | undefined
}

/** The input as it is sent, its lines counted on the way: an answer that took fewer was cut short. */
async function* counted(input: AsyncIterable<Uint8Array>, sent: Sent): AsyncGenerator<Uint8Array> {
  let inLine = false
  try {
    for await (const chunk of input) {
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i]!
        if (c === 0x0a) {
          if (inLine) sent.lines++
          inLine = false
        } else if (c !== 0x20 && c !== 0x09 && c !== 0x0d) {
          inLine = true
        }
      }
      yield chunk
    }
  } catch (err) {
    sent.error = err as Error
    throw err
  }
  if (inLine) sent.lines++
}

type Answer = { line: number; status: number; message: string } | { done: number; failed: number }

/** One line of the answer with answers=errors: a failed line, or the last `{"done","failed"}`; anything else is refused here. */
function parseAnswer(text: string): Answer {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    value = undefined
  }
  if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>
    const { done, failed, line, status } = o
    if (Number.isSafeInteger(done) && Number.isSafeInteger(failed)) return { done: done as number, failed: failed as number }
    if (Number.isSafeInteger(line) && Number.isSafeInteger(status)) return { line: line as number, status: status as number, message: errorMessage(o.error) ?? '' }
  }
  throw new ConfigError(`the server answered a line this command does not know: ${text.slice(0, 200)}`)
}

/** Bulk write lines, streamed to POST /graph/v1/{tenant}/bulk?answers=errors; whether every line was taken and applied. */
async function importOperations({ config, url, auth }: Endpoint): Promise<boolean> {
  const from = config.file ?? 'standard input'
  let input: AsyncIterable<Uint8Array> = process.stdin
  if (config.file !== undefined) {
    try {
      input = (await open(config.file)).createReadStream()
    } catch (err) {
      throw new ConfigError(`cannot read ${from}: ${(err as Error).message}`)
    }
  }
  const sent: Sent = { lines: 0, error: undefined }
  // A failed read of the input ends the request too: say that, not what the connection saw of it.
  const unreadable = (err: unknown): unknown => (sent.error === undefined ? err : new ConfigError(`cannot read ${from}: ${sent.error.message}`))
  const bulkUrl = `${url}?answers=errors`
  let res: Response
  try {
    // Half duplex: the body is sent as it is read; only the failed lines come back, so nothing waits to be read meanwhile.
    res = await reach(bulkUrl, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-ndjson' }, body: counted(input, sent), duplex: 'half' })
  } catch (err) {
    throw unreadable(err)
  }
  if (!res.ok) await answerOf(res, bulkUrl, 'POST')
  let summary: { done: number; failed: number } | undefined
  let cut = 'the answer ended'
  try {
    // A last line cut off inside is left out: it says nothing sure.
    for await (const lines of new AnswerLines(res.body).batches()) {
      for (const text of lines) {
        if (text === '') continue
        if (summary !== undefined) throw new ConfigError(`the server answered a line after its summary: ${text.slice(0, 200)}`)
        const answer = parseAnswer(text)
        if ('done' in answer) summary = answer
        else process.stderr.write(`line ${answer.line}: ${answer.status}${answer.message === '' ? '' : ` ${answer.message}`}\n`)
      }
    }
  } catch (err) {
    if (err instanceof ConfigError || sent.error !== undefined) throw unreadable(err)
    cut = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message
  }
  if (summary === undefined) throw new ConfigError(`the answer was cut short before its summary line (${cut}): which lines were applied is not known`)
  console.log(`imported: ${summary.done - summary.failed} operations, ${summary.failed} failed`)
  if (summary.done < sent.lines) {
    console.error(`error: the answer was cut short: the server took ${summary.done} of the ${sent.lines} lines sent; the lines after those were not applied`)
    return false
  }
  return summary.failed === 0
}

async function importTenant(): Promise<boolean> {
  const endpoint = await tenantEndpoint('import-tenant', (config) => (config.operations ? 'bulk' : 'import'))
  return endpoint.config.operations ? await importOperations(endpoint) : await importExport(endpoint)
}

if (wantsHelp(process.argv.slice(2))) {
  console.log(usage('node dist/src/import-tenant.js', true))
} else {
  importTenant().then((complete) => {
    if (!complete) process.exitCode = 1
  }, (err: unknown) => {
    console.error(err instanceof ConfigError ? `error: ${err.message}` : err)
    process.exit(1)
  })
}
