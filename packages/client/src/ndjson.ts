// Reads an NDJSON answer line by line as the caller asks for values: the
// next chunk is read from the connection only when the loop wants the next
// value (so a slow loop slows the download), and leaving the loop early
// cancels the body and aborts the request (the download stops).
import { ProfileGraphError } from './errors.js'

export async function* ndjson<T>(res: Response, abort: AbortController): AsyncGenerator<T, void, undefined> {
  if (res.body === null) return
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  let finished = false
  let buffered = ''
  try {
    for (;;) {
      const { value, done } = await reader.read().catch((e: unknown) => {
        throw new ProfileGraphError({ status: 0, type: 'network_error', message: `the answer broke off: ${(e as Error).message}`, cause: e })
      })
      if (done) break
      buffered += value
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl)
        buffered = buffered.slice(nl + 1)
        if (line.trim() !== '') yield JSON.parse(line) as T
      }
    }
    if (buffered.trim() !== '') yield JSON.parse(buffered) as T
    finished = true
  } finally {
    if (!finished) {
      await reader.cancel().catch(() => undefined)
      abort.abort()
    }
  }
}

/** An abort controller that also follows the caller's signal. */
export function linkedAbort(signal: AbortSignal | undefined): AbortController {
  const abort = new AbortController()
  if (signal?.aborted) abort.abort(signal.reason)
  else signal?.addEventListener('abort', () => abort.abort(signal.reason), { once: true })
  return abort
}
