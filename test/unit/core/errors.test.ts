import t from 'tap'
import { ApiError, ERRORS, ERROR_TYPES, errorBody, type ErrorType } from '../../../src/core/errors'
import { requireMediaType } from '../../../src/http/media-type'

const STATUS: Record<ErrorType, number> = {
  bad_request: 400, validation_violation: 400, insufficient_credentials: 401, insufficient_scope: 403, forbidden: 403,
  consent_revoked: 403, element_not_found: 404, method_not_allowed: 405, cursor_expired: 410, payload_too_large: 413,
  unsupported_media_type: 415, too_many_attempts: 400, too_many_requests: 429, service_unavailable: 503, internal_error: 500,
  insufficient_storage: 507,
  bad_gateway: 502, gateway_timeout: 504,
}

t.test('every error type has the status of the docs/manual/errors.md table and a description', async (t) => {
  for (const [type, status] of Object.entries(STATUS) as [ErrorType, number][]) {
    const e = new ApiError(type, 'm')
    t.equal(e.status, status, `${type} -> ${status}`)
    t.type(ERROR_TYPES[type], 'string')
  }
  t.same(Object.keys(ERROR_TYPES).sort(), Object.keys(STATUS).sort())
})

t.test('one table: ApiError status and ERROR_TYPES (in the order GET /errors serves) derive from ERRORS', async (t) => {
  t.same(Object.keys(ERROR_TYPES), Object.keys(ERRORS))
  for (const type of Object.keys(ERRORS) as ErrorType[]) {
    t.equal(new ApiError(type, 'm').status, ERRORS[type].status, type)
    t.equal(ERROR_TYPES[type], ERRORS[type].meaning, type)
  }
  t.same(Object.keys(ERRORS).slice(0, 2), ['bad_request', 'validation_violation'])
  t.equal(Object.keys(ERRORS).at(-1), 'internal_error')
})

t.test('ApiError carries message, type, headers; no oauth by default', async (t) => {
  const e = new ApiError('service_unavailable', 'busy', { headers: { 'retry-after': '1' } })
  t.ok(e instanceof Error)
  t.equal(e.message, 'busy')
  t.same(e.headers, { 'retry-after': '1' })
  t.equal(e.oauth, undefined)
  t.same(new ApiError('forbidden', 'no').headers, {})
})

t.test('errorBody: the platform shape, exactly', async (t) => {
  const body = errorBody(new ApiError('element_not_found', 'node core/customer/x not found'), 'http://127.0.0.1:8080')
  t.strictSame(body, {
    status: 404,
    message: 'node core/customer/x not found',
    type: 'element_not_found',
    moreInfo: 'http://127.0.0.1:8080/errors#element_not_found',
  })
  t.same(Object.keys(body), ['status', 'message', 'type', 'moreInfo'])
  t.notOk('error' in body, 'no oauth fields outside OAuth')
  t.notOk('error_description' in body)
})

t.test('errorBody: OAuth errors add error and error_description', async (t) => {
  const err = new ApiError('insufficient_credentials', 'client authentication failed', {
    oauth: { error: 'invalid_client', error_description: 'client authentication failed' },
  })
  t.strictSame(errorBody(err, 'https://auth.example.com'), {
    status: 401,
    message: 'client authentication failed',
    type: 'insufficient_credentials',
    moreInfo: 'https://auth.example.com/errors#insufficient_credentials',
    error: 'invalid_client',
    error_description: 'client authentication failed',
  })
  t.equal(JSON.stringify(errorBody(err, 'http://x')),
    '{"status":401,"message":"client authentication failed","type":"insufficient_credentials","moreInfo":"http://x/errors#insufficient_credentials","error":"invalid_client","error_description":"client authentication failed"}')
})

t.test('requireMediaType: JSON accepted with parameters and any case', async (t) => {
  t.doesNotThrow(() => requireMediaType('application/json', 'json'))
  t.doesNotThrow(() => requireMediaType('application/json; charset=utf-8', 'json'))
  t.doesNotThrow(() => requireMediaType('Application/JSON;charset=UTF-8', 'json'))
  t.doesNotThrow(() => requireMediaType('  application/json ; charset=utf-8', 'json'))
  t.doesNotThrow(() => requireMediaType('application/x-www-form-urlencoded', 'form'))
  t.doesNotThrow(() => requireMediaType('application/x-www-form-urlencoded; charset=UTF-8', 'form'))
})

t.test('requireMediaType: anything else is 415', async (t) => {
  for (const ct of ['text/plain', 'application/jsonx', 'application/json-patch+json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const err = t.throws(() => requireMediaType(ct, 'json')) as ApiError
    t.equal(err.status, 415)
    t.equal(err.type, 'unsupported_media_type')
    t.equal(err.message, `the body must be sent with Content-Type: application/json, got "${ct}"`)
    t.equal(err.oauth, undefined, 'graph errors carry no oauth fields')
  }
  const missing = t.throws(() => requireMediaType('', 'json')) as ApiError
  t.equal(missing.status, 415)
  t.equal(missing.message, 'the body must be sent with Content-Type: application/json', 'no "got" when absent')
})

t.test('requireMediaType: a form endpoint answers with an OAuth invalid_request', async (t) => {
  const err = t.throws(() => requireMediaType('application/json', 'form')) as ApiError
  t.equal(err.status, 415)
  t.equal(err.type, 'unsupported_media_type')
  t.same(err.oauth, {
    error: 'invalid_request',
    error_description: 'the body must be sent with Content-Type: application/x-www-form-urlencoded, got "application/json"',
  })
})
