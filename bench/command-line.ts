// The bench commands' shared start: options and scenarios from the command
// line, or the usage error printed (exit code 2).
import { UsageError, parseOptions, type Options } from './options'
import { selectBulkScenarios, selectScenarios, type BulkScenario, type Scenario } from './scenarios'

export function readCommandLine(argv: readonly string[]): { o: Options; scenarios: Scenario[]; bulk: BulkScenario[] } | undefined {
  return parseOrUsage(() => {
    const o = parseOptions(argv)
    return { o, scenarios: selectScenarios(o.only), bulk: selectBulkScenarios(o.only) }
  })
}

/** What `parse` makes of the command line, or undefined once its usage error is printed. */
export function parseOrUsage<T>(parse: () => T): T | undefined {
  try {
    return parse()
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    console.error(err.message)
    return undefined
  }
}
