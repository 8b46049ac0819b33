// /oauth2/v1/admin/signing-keys: the ID token signing keys (public parts and
// state only) and, with POST, a rotation (the same as the rotation command).
import type { SigningKeyRecord } from '../../models/auth-store'
import { admin, iso, reply, settle } from './common'
import { ADMIN } from '../answers'

function keyView(k: SigningKeyRecord, published: Set<string>): Record<string, unknown> {
  return {
    kid: k.kid, alg: k.alg, status: k.retired === undefined ? 'active' : 'retired',
    created: iso(k.created), retired: k.retired === undefined ? null : iso(k.retired), published: published.has(k.kid),
  }
}

export const listSigningKeys = admin({
  body: 'none',
  answers: { 200: ADMIN.signingKeys },
  handle(s, ex) {
    const published = new Set(s.oauth.keys.published().map((k) => k.kid))
    reply(ex, 200, s.oauth.keys.stored().map((k) => keyView(k, published)).sort((a, b) => String(b.created).localeCompare(String(a.created))))
  },
})

export const rotateSigningKeys = admin({
  body: 'none',
  answers: { 201: ADMIN.signingKey },
  handle(s, ex) {
    settle(ex, async () => {
      const key = await s.oauth.keys.rotate()
      reply(ex, 201, keyView(key, new Set([key.kid])))
    })
  },
})
