// Listeners by event name, typed by what each event carries: the actor pool
// tells the services through one of these (events appended, webhooks
// changed, a shard's lease gained or lost).
export type EventMap = { [name: string]: unknown[] }

export class TypedEmitter<E extends EventMap> {
  private readonly listeners: { [K in keyof E]?: Set<(...args: E[K]) => void> } = {}

  /** Calls `listener` on every `name` event until the returned function is called. */
  on<K extends keyof E>(name: K, listener: (...args: E[K]) => void): () => void {
    const listeners = (this.listeners[name] ??= new Set())
    listeners.add(listener)
    return () => { listeners.delete(listener) }
  }

  emit<K extends keyof E>(name: K, ...args: E[K]): void {
    const listeners = this.listeners[name]
    if (listeners === undefined) return
    for (const listener of listeners) listener(...args)
  }
}
