// The names both sides of cluster mode agree on: the lease bucket, each
// shard's replicated stream, and the subjects hosts answer on
// (docs/design/replication.md). One place, so a rename cannot split the cluster.

/** JetStream KV bucket holding one lease per shard (and one for the auth store). */
export const LEASE_BUCKET = 'platform_leases'

/** The lease key of a graph shard. */
export const shardLeaseKey = (shard: number): string => `shard.${shard}`

/** The lease key of the authorization service's store. */
export const AUTH_LEASE_KEY = 'auth'

/** The replicated stream of a graph shard's committed effects. */
export const shardStream = (shard: number): string => `PLATFORM_SHARD_${shard}`

/** The one subject of a shard's stream. */
export const shardSubject = (shard: number): string => `platform.shard.${shard}.effects`

/** The replicated stream of the auth store's committed effects, and its one subject. */
export const AUTH_STREAM = 'PLATFORM_AUTH'
export const AUTH_SUBJECT = 'platform.auth.effects'

/** The subject a host answers forwarded requests on. */
export const hostSubject = (nodeId: string): string => `platform.host.${nodeId}`

/** What a lease holds: who owns the shard, where its HTTP front listens, and a counter that grows with each new owner. */
export interface LeaseValue {
  node: string
  url: string
  epoch: number
  /** Written by an owner handing the shard over: the host that claims it at once (others wait for the lease to run out); nobody serves meanwhile. */
  handTo?: string
}

/** The subject owners announce a tenant's new events on, so that long-polls and streams held by any host wake up. */
export const EVENTS_SUBJECT = 'platform.events'

/** The subject the authorization service's owner answers bearer-token checks on (`node`: the owner the asker believes in). */
export const authVerifySubject = (nodeId: string): string => `platform.auth.${nodeId}.verify`

/** Set on a request one host hands to the authorization service's owner: the owner never hands it on (no loops). */
export const AUTH_FORWARDED_HEADER = 'platform-auth-forwarded'

/** A host's presence key in the lease bucket, rewritten every third of a lease period: the shard actors count live hosts by it for their fair share. */
export const hostPresenceKey = (nodeId: string): string => `host.${nodeId}`

/** Where a host reports how far it has followed a shard's stream (src/replication/catch-up.ts): not under `shard.` or `host.`, which the lease watch and the presence listing read. */
export const followReportKey = (shard: number, nodeId: string): string => `follow.${shard}.${nodeId}`

/** The JetStream object store holding the snapshots, one object each (src/replication/snapshot-store.ts); its stream is OBJ_<name>. */
export const SNAPSHOT_OBJECTS = 'platform_snapshot_files'

/** The name of one snapshot's object: the unit (a shard's number, or `auth`) and the stream sequence it holds. */
export const snapshotObject = (unit: number | 'auth', sequence: number): string => `${unit}.${sequence}`

/** The KV bucket listing each unit's kept snapshots (key `shard.<n>` or `auth`, a SnapshotIndex). */
export const SNAPSHOT_BUCKET = 'platform_snapshots'
