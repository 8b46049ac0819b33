// A data subject's own record in the authorization service, as their export
// shows it (docs/manual/graph-api.md, "A data subject's own consents and
// data"): who they are and where they sign in from, never a password hash,
// secret or key.
import type { IdentityLinks } from './identity-providers'
import type { Users } from './users'

export interface SubjectAccount {
  username: string
  email: string
  /** tenant -> role names */
  tenants: Record<string, string[]>
  /** the custom identity providers linked to the user, and the user's id at each */
  identityProviders: { provider: string; subject: string }[]
}

/** The user whose `sub` is `subject`, or null when the subject is no user of the service. */
export function subjectAccount(users: Users, links: IdentityLinks, subject: string): SubjectAccount | null {
  const user = users.find(subject)
  if (user === undefined) return null
  return { username: user.username, email: user.email, tenants: user.tenants, identityProviders: links.ofUser(user.id) }
}
