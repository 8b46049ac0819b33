// Everything the routes are handed, built once in main.ts: what the graph
// routes declare (graph/services.ts), what the authorization service's
// declare (auth/services.ts), and what the dispatcher itself needs.
import type { AuthServices } from '../auth/services'
import type { AuthCluster } from '../cluster/auth-seam'
import type { GraphServices } from '../graph/services'
import type { GatewayServices } from '../gateway/limits'
import type { OperationsServices } from '../operations/endpoints'

export type Services = AuthServices & GraphServices & GatewayServices & {
  /** Health checks and metrics access (src/operations/). */
  operations: OperationsServices
  /** Cluster mode only: where the authorization service is served (src/cluster/auth-seam.ts). */
  authCluster?: AuthCluster
}
