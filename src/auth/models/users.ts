// Users (the `sub` is the id) and the username index beside them. This is
// the one place that writes the index: a user and its username change in
// one transaction, so a username names at most one user.
import { durable, type AuthStore, type UserRecord } from './auth-store'

export class Users {
  constructor(private readonly store: AuthStore) {}

  find(id: string): UserRecord | undefined {
    return this.store.users.get(id)
  }

  exists(id: string): boolean {
    return this.store.users.get(id) !== undefined
  }

  all(): UserRecord[] {
    return [...this.store.users.getRange()].map(({ value }) => value)
  }

  /** The id of the user with this username. */
  ownerOf(username: string): string | undefined {
    return this.store.usernames.get(username)
  }

  findByUsername(username: string): UserRecord | undefined {
    const id = this.ownerOf(username)
    return id === undefined ? undefined : this.find(id)
  }

  memberOf(tenant: string): UserRecord[] {
    return this.all().filter((u) => Object.prototype.hasOwnProperty.call(u.tenants, tenant))
  }

  /** Stores the user unless another user has its username (then false), and waits until it is durable. */
  async save(user: UserRecord): Promise<boolean> {
    const taken = await this.store.env.transaction(() => {
      const owner = this.ownerOf(user.username)
      if (owner !== undefined && owner !== user.id) return true
      this.putSync(user)
      return false
    })
    if (taken) return false
    await durable(this.store)
    return true
  }

  /** Stores the user and its username inside the caller's transaction; the username was checked to be free. */
  putSync(user: UserRecord): void {
    const previous = this.store.users.get(user.id)
    // A renamed user frees its old username (unless another user already has it).
    if (previous !== undefined && previous.username !== user.username && this.ownerOf(previous.username) === user.id) {
      this.store.usernames.removeSync(previous.username)
    }
    this.store.usernames.putSync(user.username, user.id)
    this.store.users.putSync(user.id, user)
  }

  async durable(): Promise<void> {
    await durable(this.store)
  }

  /** Removes the user and frees its username; the caller makes it durable after what goes with it. */
  async remove(id: string): Promise<void> {
    await this.store.env.transaction(() => {
      const user = this.store.users.get(id)
      if (user === undefined) return
      this.store.users.removeSync(id)
      if (this.ownerOf(user.username) === id) this.store.usernames.removeSync(user.username)
    })
  }
}
