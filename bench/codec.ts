// Measures the two candidate codecs for the batches between the front thread
// and the actors, over a real MessageChannel round trip to another thread:
// structured clone of the plain batch, and msgpackr into a transferred
// buffer: with records defined inline in every message, and `sequential`
// (structures shared over the ordered channel: each defined once, in the
// first message that uses it). `node dist/bench/codec.js`;
// src/contract/codec.ts uses the winner.
import { Packr } from 'msgpackr'
import { MessageChannel, Worker, isMainThread, parentPort } from 'node:worker_threads'
import type { ActorRequest } from '../src/contract/messages'

type Mode = 'clone' | 'msgpackr' | 'msgpackr-shared'

/** One per channel and direction: shared structures live as long as their channel. */
const packrFor = (mode: Mode): Packr => new Packr({ structuredClone: false, useRecords: true, sequential: mode === 'msgpackr-shared' })

function batch(size: number, seq: number): ActorRequest[] {
  return Array.from({ length: size }, (_, i) => ({
    kind: 'call' as const, id: seq + i, shard: i % 4,
    operation: {
      op: 'putNode' as const, tenant: `tenant-${i % 16}`, node: { ns: 'core', type: 'customer', id: `customer-${seq + i}` },
      props: { name: 'John Smith', age: 42, email: 'john@example.com', tags: ['a', 'b'], score: 0.5 },
      ctx: { consent: 'consent-123', client: 'enricher', trace: undefined, schedule: undefined, decay: undefined },
    },
  }))
}

if (!isMainThread) {
  // Echo side: decode, then answer with a small reply batch per request, encoded the same way.
  parentPort!.on('message', ({ mode, port }: { mode: Mode; port: import('node:worker_threads').MessagePort }) => {
    const decoder = packrFor(mode)
    const encoder = packrFor(mode)
    port.on('message', (wire: unknown) => {
      const reqs = (mode === 'clone' ? wire : decoder.unpack(Buffer.from(wire as Uint8Array))) as ActorRequest[]
      const replies = reqs.map((r) => ({ kind: 'ok', id: r.id, status: 204, body: undefined, total: undefined }))
      if (mode === 'clone') port.postMessage(replies)
      else {
        const buf = encoder.pack(replies)
        const copy = new Uint8Array(buf)
        port.postMessage(copy, [copy.buffer])
      }
    })
  })
} else {
  void (async () => {
    const worker = new Worker(__filename)
    const rounds = 20_000
    const results: string[] = []
    for (const size of [1, 8, 32]) {
      for (const mode of ['clone', 'msgpackr', 'msgpackr-shared'] as Mode[]) {
        const encoder = packrFor(mode)
        const decoder = packrFor(mode)
        const { port1, port2 } = new MessageChannel()
        worker.postMessage({ mode, port: port2 }, [port2])
        const batches = Array.from({ length: 64 }, (_, i) => batch(size, i * size))
        let done = 0
        const start = process.hrtime.bigint()
        await new Promise<void>((resolve) => {
          port1.on('message', (wire: unknown) => {
            if (mode !== 'clone') decoder.unpack(Buffer.from(wire as Uint8Array))
            if (++done === rounds) resolve()
            else send(done)
          })
          const send = (i: number): void => {
            const b = batches[i % batches.length]!
            if (mode === 'clone') port1.postMessage(b)
            else {
              const copy = new Uint8Array(encoder.pack(b))
              port1.postMessage(copy, [copy.buffer])
            }
          }
          // Keep 16 batches in flight, as a busy front thread would.
          for (let i = 0; i < 16; i++) send(i)
        })
        const secs = Number(process.hrtime.bigint() - start) / 1e9
        port1.close()
        results.push(`| ${size} | ${mode} | ${Math.round((rounds * size) / secs).toLocaleString('en')} requests/s |`)
      }
    }
    console.log('| batch size | codec | throughput (round trips) |\n|---|---|---|')
    console.log(results.join('\n'))
    await worker.terminate()
  })()
}
