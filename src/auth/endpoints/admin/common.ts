// What the admin handlers share: the platform.admin scope on every route,
// JSON answers that are never cached, 404s, and running a write to
// completion (durable) before answering.
import { ApiError } from '../../../core/errors'
import type { Exchange } from '../../../http/exchange'
import { Type, type TSchema } from '@sinclair/typebox'
import { NO_BODY } from '../../../http/route'
import { oauthMethod, type AuthServices, type OAuthMethod } from '../../services'
import { NO_STORE } from '../../helpers/token-response'
import { violation } from '../../helpers/json-body'

export const ADMIN_SCOPE = 'platform.admin'

/** Declares an admin route method: oauthMethod plus the platform.admin scope. */
export const admin: typeof oauthMethod = (spec) => ({ ...oauthMethod(spec), scope: ADMIN_SCOPE })

/** The path of one record: admin/<kind>/:id. */
export const IdParams = Type.Object({ id: Type.String() })

export function reply(ex: Exchange, status: number, value: unknown): void {
  ex.json(status, JSON.stringify(value), NO_STORE)
}

export const missing = (kind: string, id: string): ApiError => new ApiError('element_not_found', `${kind} "${id}" does not exist`)

/** The record with this id, or the 404 that names it. */
export function findOr404<T>(model: { find(id: string): T | undefined }, kind: string, id: string): T {
  const value = model.find(id)
  if (value === undefined) throw missing(kind, id)
  return value
}

/** Runs an asynchronous handler body; its failure becomes the error answer. */
export function settle(ex: Exchange, work: () => Promise<void>): void {
  work().catch((err: unknown) => ex.error(err))
}

/** The ISO 8601 form (with offset) of an epoch-ms time. */
export const iso = (ms: number): string => new Date(ms).toISOString()

/** What the generic handlers need of a model (models/keyed.ts, models/users.ts). */
export interface Collection<T> {
  find(id: string): T | undefined
  all(): T[]
  remove(id: string): Promise<void>
  /** Waits until every write so far is durable. */
  durable(): Promise<void>
}

/** GET of a collection: every record, shown through `view`. */
export function listOf<T>(model: (s: AuthServices) => Collection<T>, answer: TSchema, view: (v: T) => unknown = (v) => v): OAuthMethod {
  return admin({
    body: 'none',
    answers: { 200: answer },
    summary: 'List them',
    handle(s, ex) {
      reply(ex, 200, model(s).all().map(view))
    },
  })
}

/** GET of one record by the path's id. */
export function getOne<T>(kind: string, model: (s: AuthServices) => Collection<T>, answer: TSchema, view: (v: T) => unknown = (v) => v): OAuthMethod {
  return admin({
    body: 'none',
    answers: { 200: answer },
    errors: ['element_not_found'],
    params: IdParams,
    handle(s, ex, { params: { id } }) {
      reply(ex, 200, view(findOr404(model(s), kind, id)))
    },
  })
}

/** DELETE of one record; `refuse` names what still depends on it, `cascade` ends what goes with it. */
export function deleteOne<T>(
  kind: string, model: (s: AuthServices) => Collection<T>,
  options: { refuse?: (s: AuthServices, id: string) => string | undefined; cascade?: (s: AuthServices, value: T) => Promise<void> } = {},
): OAuthMethod {
  return admin({
    body: 'none',
    params: IdParams,
    answers: { 204: NO_BODY },
    errors: ['element_not_found', 'validation_violation'],
    handle(s, ex, { params: { id } }) {
      const value = findOr404(model(s), kind, id)
      const refusal = options.refuse?.(s, id)
      if (refusal !== undefined) throw violation(refusal)
      settle(ex, async () => {
        await model(s).remove(id)
        await options.cascade?.(s, value)
        await model(s).durable()
        ex.empty(204)
      })
    },
  })
}
