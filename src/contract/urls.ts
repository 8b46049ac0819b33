// Every URL the service writes into a response, built from PUBLIC_URL. Path
// segments are percent-encoded so an id with "/" stays one segment.
import type { NodeRef, RelationRef } from './messages'

const enc = encodeURIComponent

export class Urls {
  readonly graphBase: string
  constructor(readonly publicUrl: string) {
    this.graphBase = `${publicUrl}/graph/v1`
  }

  metamodel(tenant: string): string {
    return `${this.graphBase}/${enc(tenant)}/metamodel`
  }
  nodeSchema(tenant: string, ns: string, type: string): string {
    return `${this.metamodel(tenant)}/nodes/${enc(ns)}/${enc(type)}`
  }
  relationSchema(tenant: string, r: RelationRef): string {
    return `${this.metamodel(tenant)}/relations/${[r.from.ns, r.from.type, r.to.ns, r.to.type, r.rel.ns, r.rel.type].map(enc).join('/')}`
  }
  neighbours(tenant: string, n: NodeRef): string {
    return `${this.graphBase}/${enc(tenant)}/neighbours/${enc(n.ns)}/${enc(n.type)}/${enc(n.id)}`
  }
}

/** Where the gateway serves a package's service (its `proxyUrl`): `{PUBLIC_URL}/gateway/{packageId}/{serviceId}`. */
export function proxyUrlOf(publicUrl: string, packageId: string, serviceId: string): string {
  return `${publicUrl}/gateway/${enc(packageId)}/${enc(serviceId)}`
}
