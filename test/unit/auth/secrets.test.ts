// Timed access tokens and their storage keys (src/auth/helpers/secrets.ts).
import t from 'tap'
import { randomToken, sha256, timedToken, tokenKey } from '../../../src/auth/helpers/secrets'

t.test('a timed token is its issue time and 256 random bits, base64url', async (t) => {
  const ms = 1_764_000_000_123
  const token = timedToken(ms)
  t.match(token, /^[A-Za-z0-9_-]{51}$/)
  const bytes = Buffer.from(token, 'base64url')
  t.equal(bytes.length, 38)
  t.equal(bytes.readUIntBE(0, 6), ms)
  t.not(timedToken(ms), token, 'the same millisecond, another token')
  t.equal(Buffer.from(timedToken(-5), 'base64url').readUIntBE(0, 6), 0, 'a time before 1970 is clamped')
  t.equal(Buffer.from(timedToken(2 ** 50), 'base64url').readUIntBE(0, 6), 2 ** 48 - 1, 'and one past 2^48 ms')
})

t.test('keys sort by issue time, end with the SHA-256 of the whole token, and hold nothing else of it', async (t) => {
  const times = [0, 1, 255, 256, 65_535, 1_000_000_000_000, 1_764_000_000_000, 1_764_000_000_001, 2 ** 48 - 1]
  const keys = times.map((ms) => tokenKey(timedToken(ms)))
  t.same([...keys].sort(), keys, 'string order is time order')
  const token = timedToken(1_764_000_000_000)
  const key = tokenKey(token)
  t.equal(key, (1_764_000_000_000).toString(16).padStart(12, '0') + sha256(token))
  t.notOk(key.includes(token.slice(8, 20)), 'the random part is not in the key')
})

t.test('any other token is keyed by its SHA-256 alone: tokens of earlier builds, and made-up ones', async (t) => {
  const old = randomToken()
  t.equal(old.length, 43)
  t.equal(tokenKey(old), sha256(old))
  t.equal(tokenKey('x'), sha256('x'))
  const token = timedToken(1_764_000_000_000)
  const forged = token.slice(0, 50) + (token[50] === 'A' ? 'B' : 'A')
  t.not(tokenKey(forged), tokenKey(token), 'one character changed: another key')
  t.equal(tokenKey('!!!!!!!!' + token.slice(8)).endsWith(sha256('!!!!!!!!' + token.slice(8))), true, 'a time part that is not base64url still keys by the whole token')
})
