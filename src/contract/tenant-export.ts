// The lines of a tenant export (NDJSON, one JSON object per line), in the
// order they are written and must be imported: the metamodel, every consent
// (status only: no key), every node, every relation. An element whose data
// cannot be opened (its consent revoked, or sealed under a destroyed key) is
// exported `locked`, without properties: it is never decrypted. Everything
// else carries its properties in plaintext, to be sealed again under the
// importing installation's keys. docs/design/contracts.md, *Tenant export*.
import type { TenantMetamodel } from '../model/metamodel'
import type { NodeRef } from './messages'

/** Who created it and when, and its owner: a consent reference or TENANT. */
export interface ExportedMeta {
  created: number
  createdBy: string
  owner: string
}

/** Properties in plaintext, or `locked` without them. */
export type ExportedData = { properties: Record<string, unknown>; locked?: undefined } | { locked: true; properties?: undefined }

export type ExportLine =
  | { kind: 'metamodel'; tenant: string; metamodel: TenantMetamodel }
  /** `client` and `changed` where the consent records them (disk format 6). */
  | { kind: 'consent'; ref: string; subject: string; status: 'granted' | 'revoked'; revokedProperties: string[]; created: number; client?: string; changed?: number }
  | ({ kind: 'node'; node: NodeRef } & ExportedMeta & ExportedData)
  | ({ kind: 'relation'; from: NodeRef; to: NodeRef; rel: NodeRef } & ExportedMeta & ExportedData)

/** What an import batch carries (the metamodel line is checked by the importer, not stored). */
export type ImportLine = Exclude<ExportLine, { kind: 'metamodel' }>
