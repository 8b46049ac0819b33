// Cluster mode's options (src/config/load-config.ts reads them; docs/manual/cluster.md).
// Absent: the single-machine mode, which needs no NATS.

export interface ClusterOptions {
  /** NATS server URLs (`--nats-url`, comma-separated). */
  servers: string[]
  /** This host's name in the cluster (`--node-id`), unique per host. */
  nodeId: string
  /** The key-encryption key file shared by every host (`--kek-file`): wraps data keys in cluster mode. */
  kekFile: string
  /**
   * This host's own base URL, where the other hosts reach it (`--cluster-url`): named in the leases it
   * holds, and where OAuth requests are handed to the auth owner. Absent: its public URL, which is then
   * per host. Give it to let every host share one public URL, and so one issuer (docs/manual/cluster.md).
   */
  hostUrl: string | undefined
  /** Lease period in milliseconds (`--lease-ms`). */
  leaseMs: number
  /**
   * When a write is acknowledged (`--cluster-durability`): `local`, once the replicated stream took it and
   * this host's LMDB synced it (survives a power loss of every host); `quorum`, once the stream took it and
   * LMDB committed it, without waiting for LMDB's sync (survives the loss of one NATS server or host, not a
   * power loss of the NATS quorum: docs/manual/cluster.md, "Durability").
   */
  durability: ClusterDurability
  /** When each shard's owner snapshots it (docs/design/replication.md, "Snapshots"). */
  snapshots: SnapshotOptions
}

export const CLUSTER_DURABILITIES = ['local', 'quorum'] as const
export type ClusterDurability = typeof CLUSTER_DURABILITIES[number]

export interface SnapshotOptions {
  /** A snapshot once this many stream entries were appended since the newest (`--snapshot-entries`). */
  everyEntries: number
  /** Or once this long has passed since it, if anything was appended (`--snapshot-interval`). */
  everyMs: number
  /** Snapshots kept per shard (`--snapshots-kept`): the stream is purged below the oldest. */
  keep: number
}

/** Where the other hosts reach this one: `--cluster-url`, or else its public URL. */
export function hostUrlOf(options: ClusterOptions, publicUrl: string): string {
  return options.hostUrl ?? publicUrl
}
