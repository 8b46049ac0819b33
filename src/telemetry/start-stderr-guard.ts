// Imported first by src/main.ts, before the log takes its descriptor: the
// server's stderr goes through its relay (src/telemetry/stderr-guard.ts).
import { guardStderr } from './stderr-guard'

guardStderr()
