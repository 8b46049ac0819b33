// How far V8 lets each thread's heap grow past what it found live before it
// collects again. V8 picks this factor by the heap's cap: up to 4x for an
// uncapped heap (the front thread), about 1.3x for a capped one (the actors,
// --actor-heap-mb). In the 1M-node scale run the front thread then held
// 100-180 MB of heap with 50-60 MB live, and the process's private memory
// peaked at 610-670 MB in a read pass (bench/README.md, "Memory: the front
// thread's heap"). The flag is V8's, process-wide and read at every
// collection, so it also holds for threads started later.
import { setFlagsFromString } from 'node:v8'

/** Sets V8's heap growing factor to 1 + percent/100 for every thread; 0 leaves V8's own factor. */
export function limitHeapGrowth(percent: number): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`)
}
