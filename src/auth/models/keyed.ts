// What the models of admin-managed records share: a table keyed by the
// record's id, read directly and written to completion (durable).
import type { Database } from 'lmdb'
import { durable, type AuthStore } from './auth-store'

export class Keyed<T> {
  constructor(protected readonly store: AuthStore, protected readonly table: Database<T, string>) {}

  find(id: string): T | undefined {
    return this.table.get(id)
  }

  exists(id: string): boolean {
    return this.table.get(id) !== undefined
  }

  all(): T[] {
    return [...this.table.getRange()].map(({ value }) => value)
  }

  /** Stores the record and waits until it is durable. */
  async save(id: string, value: T): Promise<void> {
    await this.table.put(id, value)
    await durable(this.store)
  }

  /** Removes the record; the caller makes it durable after what goes with it. */
  async remove(id: string): Promise<void> {
    await this.table.remove(id)
  }

  async durable(): Promise<void> {
    await durable(this.store)
  }

  /** Stores the record inside the caller's transaction (the bootstrap import). */
  putSync(id: string, value: T): void {
    this.table.putSync(id, value)
  }
}
