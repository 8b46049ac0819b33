// TokenHashes: one hash per token however often it is presented, and bounded.
import t from 'tap'
import { TokenHashes } from '../../../src/auth/models/token-hashes'

t.test('hashes a token once and stays within its limit', async (t) => {
  const calls: string[] = []
  const hashes = new TokenHashes((token) => { calls.push(token); return `h(${token})` }, 3)
  t.equal(hashes.of('a'), 'h(a)')
  t.equal(hashes.of('a'), 'h(a)')
  t.same(calls, ['a'])
  for (const token of ['b', 'c', 'd']) hashes.of(token)
  t.equal(hashes.of('d'), 'h(d)')
  t.same(calls, ['a', 'b', 'c', 'd'], 'd was remembered after the clear')
  t.equal(hashes.of('a'), 'h(a)', 'a forgotten entry is hashed again, with the same answer')
  t.same(calls, ['a', 'b', 'c', 'd', 'a'])
})
