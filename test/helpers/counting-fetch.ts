// A fetch for client tests that counts requests by path and the answer
// bytes the caller actually read, and notices a cancelled answer body: it
// passes the body on one chunk per read (no read-ahead of its own).
export interface CountingFetch {
  fetch: typeof fetch
  requests(pathPart: string): number
  bodyBytes(): number
  cancelled(): number
  /** Resolves once every cancelled body has finished cancelling. */
  settled(): Promise<void>
}

export function countingFetch(): CountingFetch {
  const paths: string[] = []
  let bytes = 0
  let cancelled = 0
  const cancels: Promise<void>[] = []
  const wrapped: typeof fetch = async (input, init) => {
    paths.push(new URL(String(input)).pathname)
    const res = await fetch(input, init)
    if (res.body === null) return res
    const reader = res.body.getReader()
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read()
        if (done) controller.close()
        else {
          bytes += value.byteLength
          controller.enqueue(value)
        }
      },
      cancel(reason) {
        cancelled++
        const done = reader.cancel(reason)
        cancels.push(done.catch(() => undefined))
        return done
      },
    }, { highWaterMark: 0 })
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
  }
  return {
    fetch: wrapped,
    requests: (part) => paths.filter((p) => p.includes(part)).length,
    bodyBytes: () => bytes,
    cancelled: () => cancelled,
    settled: async () => { await Promise.all(cancels) },
  }
}
