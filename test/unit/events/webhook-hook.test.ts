// A webhook's delivery state is one phase plus one save state
// (src/events/webhook-hook.ts): the transitions webhook delivery relies on.
import t from 'tap'
import { Hook } from '../../../src/events/webhook-hook'

const STATE = { cursor: 7, failingSince: null, suspended: false, lastError: null }
const hook = (suspended = false): Hook => new Hook('acme', 'w1', 'http://127.0.0.1:1/', 'secret', { ...STATE, suspended })

t.test('a hook starts idle, or suspended when its persisted state says so', async (t) => {
  const h = hook()
  t.equal(h.phase, 'idle')
  t.same(h.state(), STATE)
  const s = hook(true)
  t.equal(s.phase, 'suspended')
  t.equal(s.state().suspended, true, 'the persisted flag is the phase')
})

t.test('settle ends a read, a POST or a wait, and tells whether the hook is still there', async (t) => {
  const h = hook()
  for (const phase of ['reading', 'posting', 'waiting'] as const) {
    h.phase = phase
    t.equal(h.settle(), true, phase)
    t.equal(h.phase, 'idle')
  }
  h.phase = 'suspended'
  t.equal(h.settle(), true)
  t.equal(h.phase, 'suspended', 'a suspended hook stays suspended')
  h.phase = 'removed'
  t.equal(h.settle(), false, 'a removed hook stays removed')
  t.equal(h.phase, 'removed')
  t.equal(h.removed, true)
})

t.test('one save at a time: a change during a save owes exactly one more', async (t) => {
  const h = hook()
  t.equal(h.beginSave(), true, 'the first save goes')
  t.equal(h.beginSave(), false, 'a second waits')
  t.equal(h.beginSave(), false, 'a third folds into it')
  t.equal(h.saving, 'in flight, due')
  h.endSave(false)
  t.equal(h.takeDue(), true, 'one more save is owed')
  t.equal(h.takeDue(), false, 'and only one')
  t.equal(h.beginSave(), true)
  h.endSave(false)
  t.equal(h.saving, 'idle')
  t.equal(h.takeDue(), false, 'nothing owed after a plain save')
})

t.test('a save lost to an actor restart is owed again', async (t) => {
  const h = hook()
  t.equal(h.beginSave(), true)
  h.endSave(true)
  t.equal(h.saving, 'due')
  // A save started while one is owed also owes the one after it (as before the state was one value).
  t.equal(h.beginSave(), true)
  t.equal(h.saving, 'in flight, due')
  h.endSave(false)
  t.equal(h.takeDue(), true)
})
