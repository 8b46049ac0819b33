// @profile-graph/client: the typed client of the profile graph service.
// Works in Node 20+ and browsers: global fetch, web streams and WebSocket only.
export { ProfileGraphClient, type ClientOptions, type ListOptions, type ReadOptions } from './client.js'
export { ProfileGraphError, isProfileGraphError } from './errors.js'
export { isLocked } from './locked.js'
export { bulkLines, BulkWrite, type BulkOptions, type BulkResult, type BulkSummary } from './bulk.js'
export type { EventStreamOptions, WebSocketConstructor, WebSocketLike } from './events.js'
export { ClientCredentialsTokens, type ClientCredentials, type TokenSource } from './token.js'
export type { RetryOptions } from './transport.js'
export type { NodeRef, RelationRef, TypeRef } from './refs.js'
export type { WriteOptions } from './write-headers.js'
export type * from './types.js'
export type { paths, components, operations } from './generated/openapi.js'
