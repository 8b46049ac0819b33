import t from 'tap'
import { CoalescedWrites, type ReplicatedWrite } from '../../../src/replication/coalesced-writes'

/** A replica stand-in: one write at a time, each held until the test lets it end. */
function fakeReplica(): { write: ReplicatedWrite; writes: number[][]; release(err?: Error): void } {
  const writes: number[][] = []
  const gates: ((err?: Error) => void)[] = []
  let queue: Promise<unknown> = Promise.resolve()
  const write: ReplicatedWrite = (run) => {
    const next = queue.then(async () => {
      const results = run()
      writes.push(results as number[])
      await new Promise<void>((resolve, reject) => gates.push((err) => (err === undefined ? resolve() : reject(err))))
      return results
    })
    queue = next.catch(() => undefined)
    return next
  }
  const release = (err?: Error): void => gates.shift()!(err)
  return { write, writes, release }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r))

t.test('batches that arrive while a write is under way join the next write, each gets its own result', async (t) => {
  const replica = fakeReplica()
  const c = new CoalescedWrites(replica.write)
  const first = c.add(() => 1)
  await tick()
  t.same(replica.writes, [[1]], 'an idle replica takes the first batch at once')
  const joined = [c.add(() => 2), c.add(() => 3), c.add(() => 4)]
  await tick()
  t.same(replica.writes, [[1]], 'the others wait while the first is under way')
  replica.release()
  t.equal(await first, 1)
  await tick()
  t.same(replica.writes, [[1], [2, 3, 4]], 'the three waiting batches ran in one write, in order')
  replica.release()
  t.same(await Promise.all(joined), [2, 3, 4], 'each batch gets its own result')
})

t.test('a refused write refuses every batch in it and none of the next', async (t) => {
  const replica = fakeReplica()
  const c = new CoalescedWrites(replica.write)
  const first = c.add(() => 1)
  await tick()
  const refused = [c.add(() => 2), c.add(() => 3)]
  replica.release()
  await first
  await tick()
  const later = c.add(() => 4)
  replica.release(new Error('fenced'))
  for (const p of refused) await t.rejects(p, { message: 'fenced' })
  await tick()
  replica.release()
  t.equal(await later, 4, 'a batch that came after the refused write is written on its own')
  t.same(replica.writes, [[1], [2, 3], [4]])
})

t.test('a write refused before it ran takes no more batches: the next ones form a write of their own', async (t) => {
  let serving = false
  const writes: number[][] = []
  const c = new CoalescedWrites(async (run) => {
    await Promise.resolve()
    if (!serving) throw new Error('not serving')
    const results = run() as number[]
    writes.push(results)
    return results
  })
  await t.rejects(c.add(() => 1), { message: 'not serving' })
  serving = true
  t.equal(await c.add(() => 2), 2, 'a batch after the refusal is written')
  t.same(writes, [[2]])
})
