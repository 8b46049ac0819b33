// The admin API's one "find by id, else 404 naming it" (src/auth/endpoints/admin/common.ts).
import t from 'tap'
import { findOr404 } from '../../../src/auth/endpoints/admin/common'
import { ApiError } from '../../../src/core/errors'

const model = { find: (id: string): string | undefined => (id === 'acme' ? 'the acme record' : undefined) }

t.equal(findOr404(model, 'tenant', 'acme'), 'the acme record')
t.throws(() => findOr404(model, 'tenant', 'nope'), new ApiError('element_not_found', 'tenant "nope" does not exist'))
