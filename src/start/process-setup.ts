// What the process is set to before it opens anything: the V8 heap's
// growth, the log, and the test clock.
import { readFileSync } from 'node:fs'
import { useOffsetClockFromEnv } from '../core/clock'
import type { Config } from '../config/load-config'
import { log, setLogLevel, startLogThread } from '../telemetry/log'
import { tuneHeap } from './v8-heap'

export function startTelemetry(config: Config): void {
  tuneHeap(config.heapGrowthPercent)
  setLogLevel(config.logLevel)
  startLogThread()
}

/** Tests only: a clock that follows the offset in CLOCK_OFFSET_FILE, loudly. */
export function useTestClock(): void {
  const clockOffsetFile = useOffsetClockFromEnv(process.env, (p) => readFileSync(p, 'utf8'))
  if (clockOffsetFile !== undefined) log.warn(`warning: CLOCK_OFFSET_FILE is set (tests only): the clock follows the offset in ${clockOffsetFile}`)
}
