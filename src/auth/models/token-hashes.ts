// The SHA-256 of bearer tokens seen recently, so a client that sends the same
// token on every request pays the hash once. Only the token-to-hash mapping
// is remembered, which never changes: whether a token is live is still
// decided by its hash's record (AccessTokens' cache, which every revocation
// clears before it answers), so this can never outlive a revocation.
const DEFAULT_LIMIT = 100_000

export class TokenHashes {
  private readonly hashes = new Map<string, string>()

  constructor(private readonly hash: (token: string) => string, private readonly limit = DEFAULT_LIMIT) {}

  of(token: string): string {
    let hash = this.hashes.get(token)
    if (hash === undefined) {
      hash = this.hash(token)
      // Bounded like the record cache: a flood of made-up tokens empties it, it never grows past the limit.
      if (this.hashes.size >= this.limit) this.hashes.clear()
      this.hashes.set(token, hash)
    }
    return hash
  }
}
