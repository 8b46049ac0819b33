// What the stderr relay (src/telemetry/stderr-relay.ts) makes of the bytes that reach
// the server's file descriptor 2 from outside its log: a JSON line passes as
// it is, the start's `error:` line too; any other text (LMDB's C code, a
// library's console.error, Node's own warnings) becomes one JSON log line,
// so that every line on stderr is JSON and none glues onto another.

/** A line the relay passes unchanged. */
function passes(line: string): boolean {
  if (line.startsWith('error: ')) return true
  if (!line.startsWith('{')) return false
  try {
    return typeof JSON.parse(line) === 'object'
  } catch {
    return false
  }
}

/** The log line for `text` written by process `pid` outside the log (at level error: nothing asks for such output but trouble). */
export function wrapForeign(text: string, pid: number, time = Date.now()): string {
  return `${JSON.stringify({ level: 50, time, pid, stream: 'stderr', msg: text })}\n`
}

/**
 * Splits what arrived into lines. `rest` is a line begun but not ended;
 * `flush` ends it too (a pause, or the end of the input: C code that
 * writes without a newline).
 */
export function relayLines(rest: string, chunk: string, pid: number, flush: boolean): { out: string; rest: string } {
  const text = rest + chunk
  const lines = text.split('\n')
  let tail = lines.pop() ?? ''
  if (flush && tail.length > 0) {
    lines.push(tail)
    tail = ''
  }
  let out = ''
  for (const line of lines) {
    const trimmed = line.replace(/\r$/, '')
    if (trimmed.trim() === '') continue
    out += passes(trimmed) ? `${trimmed}\n` : wrapForeign(trimmed, pid)
  }
  return { out, rest: tail }
}
