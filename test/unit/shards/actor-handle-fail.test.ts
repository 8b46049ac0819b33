// An actor's thread exits with calls pending: each gets a 503, marked as not
// run when the thread had answered a clean shutdown (so a cluster host that
// forwarded the call sends it on to the shard's next owner).
import t from 'tap'
import { ActorHandle } from '../../../src/shards/actor-handle'
import type { ActorReply } from '../../../src/contract/messages'

t.test('failAll answers every pending call with a 503, not run only when told', async (t) => {
  for (const notRun of [false, true]) {
    const actor = new ActorHandle(0)
    const replies: ActorReply[] = []
    actor.pending.set(1, (r) => replies.push(r))
    actor.pending.set(2, (r) => replies.push(r))
    actor.failAll('gone', notRun)
    t.same(replies.map((r) => r.kind === 'error' ? [r.id, r.type, r.message, r.notRun] : r.kind), [[1, 'service_unavailable', 'gone', notRun ? true : undefined], [2, 'service_unavailable', 'gone', notRun ? true : undefined]], notRun ? 'not run' : 'may have run')
    t.equal(actor.pending.size, 0, 'nothing left pending')
  }
})
