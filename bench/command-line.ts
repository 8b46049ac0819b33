// The bench commands' shared start: options and scenarios from the command
// line, or the usage error printed (exit code 2).
import { UsageError, parseOptions, type Options } from './options'
import { selectBulkScenarios, selectScenarios, type BulkScenario, type Scenario } from './scenarios'

export function readCommandLine(argv: readonly string[]): { o: Options; scenarios: Scenario[]; bulk: BulkScenario[] } | undefined {
  try {
    const o = parseOptions(argv)
    return { o, scenarios: selectScenarios(o.only), bulk: selectBulkScenarios(o.only) }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    console.error(err.message)
    return undefined
  }
}
