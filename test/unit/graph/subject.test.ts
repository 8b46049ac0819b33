// Who a data subject's route acts on (subjectOf), and many revocations as
// one answer (revokeAll): pure modules of src/graph.
import t from 'tap'
import type { AccessTokenRecord } from '../../../src/auth/models/auth-store'
import type { ActorReply } from '../../../src/contract/messages'
import { ApiError } from '../../../src/core/errors'
import { REVOKE_WAVE, revokeAll } from '../../../src/graph/revoke-all'
import { subjectOf } from '../../../src/graph/subject'

const token = (sub: string | undefined, scopes: string[]): AccessTokenRecord => ({ client: 'c', tenant: 'demo', scopes, sub, exp: 0 })
const MANAGE = 'platform.profile_graph_manage'
const typeOf = (fn: () => unknown): string | undefined => {
  try {
    fn()
    return undefined
  } catch (err) {
    return err instanceof ApiError ? err.type : 'not an ApiError'
  }
}

t.test('subjectOf: a user token acts on itself, the manage scope on the subject it names', async (t) => {
  const user = token('u-1', ['platform.profile_graph_view'])
  t.equal(subjectOf(user, undefined), 'u-1')
  t.equal(subjectOf(user, 'u-1'), 'u-1', 'naming itself')
  t.equal(typeOf(() => subjectOf(user, 'u-2')), 'forbidden', 'another subject')
  const client = token(undefined, [MANAGE])
  t.equal(subjectOf(client, 'u-2'), 'u-2')
  t.equal(typeOf(() => subjectOf(client, undefined)), 'bad_request', 'a client token names the subject')
  t.equal(typeOf(() => subjectOf(client, '')), 'bad_request', 'not empty')
  t.equal(typeOf(() => subjectOf(client, 'x'.repeat(385))), 'bad_request', 'within the id limit')
  const admin = token('u-9', [MANAGE])
  t.equal(subjectOf(admin, undefined), 'u-9', 'a manage-scope user token without ?subject= acts on itself')
  t.equal(subjectOf(admin, 'u-2'), 'u-2')
})

const OK: ActorReply = { kind: 'ok', id: 1, status: 204, body: undefined, total: undefined }
const FAIL: ActorReply = { kind: 'error', id: 1, type: 'service_unavailable', message: 'full' }

t.test('revokeAll: every reference, a wave at a time, one answer', async (t) => {
  const refs = Array.from({ length: REVOKE_WAVE * 2 + 3 }, (_, i) => `cr_${i}`)
  const pending: ((r: ActorReply) => void)[] = []
  const called: string[] = []
  let most = 0
  const answers: ActorReply[] = []
  revokeAll(refs, (ref, revoked) => {
    called.push(ref)
    pending.push(revoked)
    most = Math.max(most, pending.length)
  }, (r) => answers.push(r))
  while (pending.length > 0) pending.shift()!(OK)
  t.same(called, refs, 'each once, in order')
  t.equal(most, REVOKE_WAVE, 'never more than a wave in flight')
  t.same(answers.map((a) => a.kind === 'ok' && a.status), [204], 'one 204')

  const none: ActorReply[] = []
  revokeAll([], () => t.fail('nothing to revoke'), (r) => none.push(r))
  t.same(none.map((a) => a.kind === 'ok' && a.status), [204], 'nothing to revoke: 204 at once')
})

t.test('revokeAll: the first failure, once the calls in flight answered; none started after it', async (t) => {
  const refs = Array.from({ length: REVOKE_WAVE + 10 }, (_, i) => `cr_${i}`)
  const pending: ((r: ActorReply) => void)[] = []
  const answers: ActorReply[] = []
  revokeAll(refs, (_ref, revoked) => pending.push(revoked), (r) => answers.push(r))
  pending.shift()!(FAIL)
  t.equal(answers.length, 0, 'not before the others answered')
  const inFlight = pending.length
  while (pending.length > 0) pending.shift()!(OK)
  t.equal(inFlight, REVOKE_WAVE - 1, 'no call started after the failure')
  t.same(answers, [FAIL], 'the failure, once')

  const sync: ActorReply[] = []
  revokeAll(['a', 'b', 'c'], (_ref, revoked) => revoked(FAIL), (r) => sync.push(r))
  t.same(sync, [FAIL], 'a call that fails at once is answered once')
  const syncOk: ActorReply[] = []
  revokeAll(['a', 'b', 'c'], (_ref, revoked) => revoked(OK), (r) => syncOk.push(r))
  t.same(syncOk.map((a) => a.kind), ['ok'], 'calls that answer at once: one answer')
})
