// Worker thread of the master-key rotation command (src/commands/rotate-master-key.ts):
// the shards of a data directory copy, each opened with the old master key
// and rotated to the new one (store/rekey-shard.ts). Posts one line per shard.
import { parentPort, workerData } from 'node:worker_threads'
import { closeShard, openShard } from './store/shard-store'
import { rekeyShard } from './store/rekey-shard'

interface RekeyData { dataDir: string; shards: number; oldKey: Uint8Array; newKey: Uint8Array }

async function run(data: RekeyData): Promise<void> {
  const oldKey = Buffer.from(data.oldKey)
  const newKey = Buffer.from(data.newKey)
  for (let shard = 0; shard < data.shards; shard++) {
    const store = openShard(data.dataDir, shard, oldKey)
    try {
      const { slots, nodes } = rekeyShard(store, oldKey, newKey)
      parentPort!.postMessage(`shard ${shard}: ${slots} data keys wrapped again, ${nodes} nodes indexed again`)
    } finally {
      await closeShard(store)
    }
  }
}

run(workerData as RekeyData).then(() => parentPort!.postMessage('done'), (err: unknown) => {
  parentPort!.postMessage(`failed: ${(err as Error).message}`)
})
