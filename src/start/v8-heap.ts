// The V8 heap settings of every thread. Both flags are V8's, process-wide
// and read at every collection, so they also hold for threads started later.
//
// Growth: how far V8 lets each thread's heap grow past what it found live
// before it collects again. V8 picks this factor by the heap's cap: up to 4x
// for an uncapped heap (the front thread), about 1.3x for a capped one (the
// actors, --actor-heap-mb). In the 1M-node scale run the front thread then
// held 100-180 MB of heap with 50-60 MB live, and the process's private
// memory peaked at 610-670 MB in a read pass (bench/MEASUREMENTS.md, "Memory:
// the front thread's heap (the 600 MB rule), 2026-11-26, late night: 525 MB,
// met").
//
// Pretenuring off: V8 allocates an object straight into the old generation
// once enough objects of its allocation site survived a scavenge. Under load
// it took that decision for the front thread's per-request `Exchange`, which
// then filled the old generation with ~280 bytes of garbage per request: a
// full mark-compact every ~1.1 s at 30k get-node/s, pauses of 2-8 ms, and
// an open-loop p99 of 12-15 ms at that rate (bench/MEASUREMENTS.md,
// "Pretenuring: V8 sent every request's `Exchange` to the old generation,
// 2026-11-27, morning").
import { setFlagsFromString } from 'node:v8'

/** Sets V8's heap growing factor to 1 + growthPercent/100 for every thread (0 leaves V8's own factor), and turns allocation-site pretenuring off. */
export function tuneHeap(growthPercent: number): void {
  setFlagsFromString(`--heap-growing-percent=${growthPercent}`)
  turnOffPretenuring()
}

/** Also for the bench's load generator and ceiling, which allocate per request the same way (bench/MEASUREMENTS.md, "Pretenuring", 2026-11-27). */
export function turnOffPretenuring(): void {
  setFlagsFromString('--no-allocation-site-pretenuring')
}
