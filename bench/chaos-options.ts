// Command line of `node dist/bench/chaos.js`.
import { UsageError, positive } from './options'

export interface ChaosOptions {
  /** Repetitions of each scenario. */
  runs: number
  /** The hosts' --lease-ms. */
  leaseMs: number
  /** Scenario names to run; empty = all. */
  only: string[]
  /** Each host's --workers. */
  workers: number
}

export const CHAOS_USAGE = `usage: node dist/bench/chaos.js [--runs N] [--lease-ms MS] [--only a,b] [--workers N]
  --runs N        repetitions of each scenario (default 3)
  --lease-ms MS   the hosts' lease period (default 3000)
  --only a,b      run only these scenarios (kill-owner, pause-owner, kill-meta-leader, wipe-host, kill-auth-owner)
  --workers N     each host's --workers (default 2)`

export function parseChaosOptions(argv: readonly string[], scenarioNames: readonly string[]): ChaosOptions {
  const o: ChaosOptions = { runs: 3, leaseMs: 3000, only: [], workers: 2 }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = (): string | undefined => argv[++i]
    switch (arg) {
      case '--runs': o.runs = Math.floor(positive(arg, value(), 1000)); break
      case '--lease-ms': o.leaseMs = Math.floor(positive(arg, value(), 600_000)); break
      case '--workers': o.workers = Math.floor(positive(arg, value(), 64)); break
      case '--only': o.only = (value() ?? '').split(',').filter((s) => s !== ''); break
      case '--help': case '-h': throw new UsageError(CHAOS_USAGE)
      default: throw new UsageError(`unknown option ${arg}\n${CHAOS_USAGE}`)
    }
  }
  const unknown = o.only.filter((n) => !scenarioNames.includes(n))
  if (unknown.length > 0) throw new UsageError(`unknown scenario ${unknown.join(', ')}\n${CHAOS_USAGE}`)
  return o
}
