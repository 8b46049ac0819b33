// The NDJSON lines of a streamed answer of the server (an export, a bulk
// request's answer), as each chunk completes them, for the tenant tools.

/** Reads `body` into complete lines; `rest` is what followed the last newline so far (not empty at the end: the answer stopped inside a line). */
export class AnswerLines {
  rest = ''

  constructor(private readonly body: Response['body']) {}

  /** The lines each chunk completes, together, without their newlines. */
  async *batches(): AsyncGenerator<string[]> {
    if (this.body === null) return
    const decoder = new TextDecoder()
    for await (const chunk of this.body as unknown as AsyncIterable<Uint8Array>) {
      const lines = (this.rest + decoder.decode(chunk, { stream: true })).split('\n')
      this.rest = lines.pop()!
      if (lines.length > 0) yield lines
    }
  }
}
