// The tenant import command:
//
//   node dist/src/import-tenant.js --tenant demo [--file demo.ndjson] [--data-dir ./data | --server-url URL]
//     --admin-client-id ID [ADMIN_CLIENT_SECRET=...]
//
// Reads an export (export-tenant.js) line by line and posts it in batches of
// bounded size to POST /graph/v1/{tenant}/import of the running server,
// which seals the data again under its own keys; progress lines on stderr.
// Batches are applied in order, each whole or not at all; what exists
// already is kept, so an interrupted import can be run again.
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { ConfigError, usage, wantsHelp } from '../config/load-config'
import { callServer, tenantEndpoint } from './admin-client'
import { lineKind, Progress } from './progress'

/** Lines per request, and bytes: well under the server's default MAX_BODY (1 MiB). */
const BATCH_LINES = 500
const BATCH_BYTES = 256 * 1024

async function importTenant(): Promise<{ progress: Progress; added: number; existing: number }> {
  const { config, url: importUrl, auth } = await tenantEndpoint('import-tenant', 'import')
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
  return { progress, added, existing }
}

if (wantsHelp(process.argv.slice(2))) {
  console.log(usage('node dist/src/import-tenant.js', true))
} else {
  importTenant().then(({ progress, added, existing }) => {
    progress.report()
    console.log(`imported: ${added} added, ${existing} already there`)
  }, (err: unknown) => {
    console.error(err instanceof ConfigError ? `error: ${err.message}` : err)
    process.exit(1)
  })
}
