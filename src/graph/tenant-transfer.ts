// GET /graph/v1/{tenant}/export and POST /graph/v1/{tenant}/import (manage
// scope): moving a tenant between installations (docs/design/contracts.md, *Tenant
// export and import*; commands src/commands/export-tenant.ts, src/commands/import-tenant.ts).
// The export streams NDJSON from the tenant's shard with back-pressure; the
// import takes one bounded batch of those lines per request (a JSON array),
// checked here for shape and applied by the shard in one transaction.
import { ApiError } from '../core/errors'
import type { NodeRef } from '../contract/messages'
import type { ImportLine } from '../contract/tenant-export'
import { answer } from '../http/answer'
import { checkKeyBytes } from '../http/key-length'
import { parseJson } from '../http/parse-json'
import { streamScan } from '../http/stream'
import { graphMethod } from './services'
import { MAX_ID_BYTES, MAX_PROPERTY_BYTES, nodeRef } from './validate'
import { checkNodeWrite, checkRelationWrite, nodeTypeOf, relationTypeOf } from './metamodel-check'
import type { Metamodel } from '../model/metamodel'
import { ExportStream, ImportResult } from './answers'

type Fields = Record<string, unknown>

const bad = (n: number, what: string): ApiError => new ApiError('bad_request', `import line ${n + 1}: ${what}`)

function fields(n: number, v: unknown, what: string): Fields {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(n, `${what} must be a JSON object`)
  return v as Fields
}

function text(n: number, o: Fields, name: string, max = MAX_ID_BYTES): string {
  const v = o[name]
  if (typeof v !== 'string' || v === '') throw bad(n, `"${name}" must be a non-empty string`)
  return checkKeyBytes(`import line ${n + 1}: "${name}"`, v, max)
}

function time(n: number, o: Fields, name: string): number {
  const v = o[name]
  if (!Number.isSafeInteger(v)) throw bad(n, `"${name}" must be an epoch-ms integer`)
  return v as number
}

function node(n: number, o: Fields, name: string): NodeRef {
  const r = fields(n, o[name], `"${name}"`)
  return nodeRef(text(n, r, 'ns'), text(n, r, 'type'), text(n, r, 'id'), `import line ${n + 1}: ${name}`)
}

function element(n: number, o: Fields): { created: number; createdBy: string; owner: string } & ({ properties: Record<string, unknown> } | { locked: true }) {
  const meta = { created: time(n, o, 'created'), createdBy: typeof o.createdBy === 'string' ? o.createdBy : '', owner: text(n, o, 'owner') }
  if (o.locked === true) return { ...meta, locked: true }
  return { ...meta, properties: fields(n, o.properties, '"properties"') }
}

/** The form createConsent gives references (128 random bits): an import cannot bring in a guessable one. */
const CONSENT_REF = /^cr_[A-Za-z0-9_-]{22}$/

/** Every imported element is of a declared type and, unless locked, holds what the metamodel allows, as a write would. */
function checkTypes(mm: Metamodel, tenant: string, line: ImportLine): ImportLine {
  if (line.kind === 'node') {
    if (line.locked === true) nodeTypeOf(mm, tenant, line.node)
    else checkNodeWrite(mm, tenant, line.node, line.properties)
  } else if (line.kind === 'relation') {
    const r = { from: line.from, to: line.to, rel: line.rel }
    if (line.locked === true) relationTypeOf(mm, tenant, r)
    else checkRelationWrite(mm, tenant, r, line.properties)
  }
  return line
}

/** One line of an export, checked; the metamodel line is compared with this installation's. */
function importLine(n: number, raw: unknown, mm: Metamodel, tenant: string): ImportLine | undefined {
  const o = fields(n, raw, 'the line')
  switch (o.kind) {
    case 'metamodel':
      if (JSON.stringify(o.metamodel) !== JSON.stringify(mm.forTenant(tenant))) {
        throw new ApiError('validation_violation', 'the export was made under another metamodel than this tenant has here; give both installations the same metamodel first')
      }
      return undefined
    case 'consent': {
      const names = o.revokedProperties
      if (!Array.isArray(names) || !names.every((p) => typeof p === 'string' && p !== '' && Buffer.byteLength(p) <= MAX_PROPERTY_BYTES)) {
        throw bad(n, '"revokedProperties" must be an array of property names')
      }
      if (o.status !== 'granted' && o.status !== 'revoked') throw bad(n, '"status" must be "granted" or "revoked"')
      if (typeof o.ref !== 'string' || !CONSENT_REF.test(o.ref)) throw bad(n, '"ref" must be a consent reference as this service makes them (cr_ and 22 base64url characters)')
      return {
        kind: 'consent', ref: text(n, o, 'ref'), subject: text(n, o, 'subject'), status: o.status, revokedProperties: names as string[], created: time(n, o, 'created'),
        // Recorded since disk format 6: an export of an older consent has neither.
        ...(o.client === undefined ? {} : { client: text(n, o, 'client') }), ...(o.changed === undefined ? {} : { changed: time(n, o, 'changed') }),
      }
    }
    case 'node':
      return { kind: 'node', node: node(n, o, 'node'), ...element(n, o) }
    case 'relation':
      return { kind: 'relation', from: node(n, o, 'from'), to: node(n, o, 'to'), rel: node(n, o, 'rel'), ...element(n, o) }
    default:
      throw bad(n, '"kind" must be metamodel, consent, node or relation')
  }
}

export const exportTenant = graphMethod({
  body: 'none',
  answers: { 200: ExportStream },
  summary: "Export the tenant's metamodel, consents, nodes and relations (NDJSON; locked data stays sealed)",
  handle(s, ex, { tenant }) {
    streamScan(ex, 'ndjson', s.streamBuffers, (onReply) => s.pool.openStream(tenant, { op: 'exportTenant', tenant, format: 'ndjson' }, onReply))
  },
})

export const importTenant = graphMethod({
  body: 'json',
  answers: { 200: ImportResult },
  errors: ['validation_violation', 'insufficient_storage'],
  summary: 'Import a batch of export lines (a JSON array), sealed again under this installation\'s keys',
  handle(s, ex, { tenant, body }) {
    const doc = parseJson(body)
    if (!Array.isArray(doc)) throw new ApiError('bad_request', 'the body must be a JSON array of export lines')
    const lines = doc.map((raw, n) => importLine(n, raw, s.metamodel, tenant)).filter((l): l is ImportLine => l !== undefined).map((l) => checkTypes(s.metamodel, tenant, l))
    if (ex.audit !== undefined) ex.audit.what = { ...ex.audit.what, lines: lines.length }
    s.pool.call(tenant, { op: 'importTenant', tenant, lines }, answer(ex))
  },
})
