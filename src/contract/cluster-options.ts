// Cluster mode's options (src/config.ts reads them; docs/cluster.md).
// Absent: the single-machine mode, which needs no NATS.

export interface ClusterOptions {
  /** NATS server URLs (`--nats-url`, comma-separated). */
  servers: string[]
  /** This host's name in the cluster (`--node-id`), unique per host. */
  nodeId: string
  /** The key-encryption key file shared by every host (`--kek-file`): wraps data keys in cluster mode. */
  kekFile: string
  /** Lease period in milliseconds (`--lease-ms`). */
  leaseMs: number
  /** When each shard's owner snapshots it (docs/cluster.md, "Snapshots"). */
  snapshots: SnapshotOptions
}

export interface SnapshotOptions {
  /** A snapshot once this many stream entries were appended since the newest (`--snapshot-entries`). */
  everyEntries: number
  /** Or once this long has passed since it, if anything was appended (`--snapshot-interval`). */
  everyMs: number
  /** Snapshots kept per shard (`--snapshots-kept`): the stream is purged below the oldest. */
  keep: number
}
