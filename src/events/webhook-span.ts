// Traces on only: the span of one webhook delivery attempt (a POST of one
// envelope), the root of a trace of its own: delivery runs apart from the
// request that caused the event. Its traceparent goes with the POST, so the
// receiver's spans join that trace.
import { endHttpCall, type Span, type Traces } from '../telemetry/traces'

/** Starts the attempt's span and puts its traceparent into `headers`. */
export function deliverySpan(t: Traces, hook: { tenant: string; id: string; url: string }, sequence: number, headers: Record<string, string>): Span {
  const span = t.start('webhook delivery', 'client', undefined, {
    'http.request.method': 'POST', 'server.address': new URL(hook.url).host,
    'profile_graph.tenant': hook.tenant, 'profile_graph.webhook': hook.id, 'profile_graph.event.sequence': sequence,
  })
  headers.traceparent = t.traceparent(span)
  return span
}

/** Ends the attempt's span: the receiver's status (anything but a 2xx is a failed delivery), or why it was not reached. */
export function deliveryEnded(t: Traces, span: Span, status: number | undefined, failure?: string): void {
  endHttpCall(t, span, status, failure, (s) => s < 200 || s >= 300)
}
