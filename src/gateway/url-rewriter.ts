// Spec 1.6: the service's source URL becomes the public proxy URL in
// response bodies and in the link and location headers. Only URLs that
// start with the source URL are rewritten (path, query and fragment after it
// kept); a match must end where the source URL's path segment ends (the
// next character is not a further path character, so
// http://svc/api does not rewrite http://svc/apiary) and must not continue
// another word before it (xhttp://svc/api stays). The body is rewritten as
// it streams: the rewriter holds back the few characters at a chunk's end
// that could still be the start of a match, so a URL split anywhere across
// chunks is found whole. Memory per response: the source URL's length.
import { StringDecoder } from 'node:string_decoder'

/** Characters that continue a URL path segment: a match followed by one is another URL. */
const CONTINUES = /[A-Za-z0-9\-._~%!$&'*+=:@]/
/** Characters that make a match part of a longer word or URL before it. */
const GLUED = /[A-Za-z0-9+.\-]/

export class UrlRewriter {
  private held = ''
  /** The character just before `held` (already sent): whether a match at the start of `held` is glued to a word. */
  private before = ''
  private readonly decoder = new StringDecoder('utf8')

  constructor(private readonly source: string, private readonly proxy: string) {}

  /** Rewrites one whole text (a header value). */
  static once(source: string, proxy: string, text: string): string {
    const r = new UrlRewriter(source, proxy)
    return r.rewrite(text, true)
  }

  /** The rewritten text that is certain so far; the rest waits for the next chunk. */
  push(chunk: Buffer): string {
    return this.rewrite(this.held + this.decoder.write(chunk), false)
  }

  /** What was held back, at the end of the body. */
  end(): string {
    return this.rewrite(this.held + this.decoder.end(), true)
  }

  private rewrite(text: string, last: boolean): string {
    const { source, proxy } = this
    let out = ''
    let from = 0
    for (;;) {
      const at = text.indexOf(source, from)
      if (at === -1) break
      const after = at + source.length
      if (after === text.length && !last) {
        // Whether it continues is in the next chunk.
        return out + this.hold(text, from, at)
      }
      const boundary = after === text.length || !CONTINUES.test(text[after]!) || source.endsWith('/')
      const glued = GLUED.test(at > 0 ? text[at - 1]! : this.before)
      out += text.slice(from, at) + (boundary && !glued ? proxy : source)
      from = after
    }
    if (last) {
      this.held = ''
      return out + text.slice(from)
    }
    // Hold back the longest tail that is a start of the source URL.
    let keep = Math.min(source.length - 1, text.length - from)
    while (keep > 0 && !source.startsWith(text.slice(text.length - keep))) keep--
    return out + this.hold(text, from, text.length - keep)
  }

  /** Sends text[from, cut) and keeps the rest for the next chunk. */
  private hold(text: string, from: number, cut: number): string {
    this.held = text.slice(cut)
    if (cut > 0) this.before = text[cut - 1]!
    return text.slice(from, cut)
  }
}
