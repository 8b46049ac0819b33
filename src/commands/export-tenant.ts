// The tenant export command:
//
//   node dist/src/export-tenant.js --tenant demo [--file demo.ndjson] [--data-dir ./data | --server-url URL]
//     --admin-client-id ID [ADMIN_CLIENT_SECRET=...]
//
// Streams GET /graph/v1/{tenant}/export of the running server (a client of
// the tenant with platform.profile_graph_manage) into the file (created 0600,
// never over an existing one; standard output without --file), with memory
// bounded whatever the tenant's size, and progress lines on stderr. The file
// holds the tenant's data in plaintext (revoked data excepted): keep it as
// private as the data directory. docs/design/contracts.md, *Tenant export and import*.
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { ConfigError, usage, wantsHelp } from '../config/load-config'
import { answerOf, reach, tenantEndpoint } from './admin-client'
import { AnswerLines } from './answer-lines'
import { privateUmask } from '../start/file-modes'
import { lineKind, Progress } from './progress'

async function exportTenant(): Promise<Progress> {
  privateUmask()
  const { config, url: exportUrl, auth } = await tenantEndpoint('export-tenant', 'export')
  const res = await reach(exportUrl, { headers: { ...auth, accept: 'application/x-ndjson' } })
  if (!res.ok || res.body === null) await answerOf(res, exportUrl, 'GET')
  const out = config.file === undefined ? process.stdout : createWriteStream(config.file, { flags: 'wx', mode: 0o600 })
  if (config.file !== undefined) await once(out, 'open')
  const progress = new Progress('exported')
  const answer = new AnswerLines(res.body)
  try {
    for await (const lines of answer.batches()) {
      for (const line of lines) progress.add(lineKind(line))
      if (!out.write(`${lines.join('\n')}\n`)) await once(out, 'drain')
    }
  } catch (err) {
    throw new ConfigError(`the export stopped after ${progress.line()}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}; the file is incomplete`)
  }
  if (answer.rest !== '') throw new ConfigError(`the export ended inside a line after ${progress.line()}; the file is incomplete`)
  if (config.file !== undefined) {
    out.end()
    await once(out, 'finish')
  }
  return progress
}

if (wantsHelp(process.argv.slice(2))) {
  console.log(usage('node dist/src/export-tenant.js', true))
} else {
  exportTenant().then((p) => p.report(), (err: unknown) => {
    console.error(err instanceof ConfigError ? `error: ${err.message}` : err)
    process.exit(1)
  })
}
