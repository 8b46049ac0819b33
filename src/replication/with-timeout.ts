// A NATS call that may never settle (a consumer's messages, a request to a
// server that is electing leaders) bounded in time: it rejects after `ms`,
// saying what did not answer.

export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms) })])
  } finally {
    clearTimeout(timer)
  }
}
