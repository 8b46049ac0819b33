// The client's types, as openapi-typescript generated them from the
// service's document at build time (packages/client/src/generated): every
// success answer of every operation has a body typed as something, neither
// `never` nor `unknown` (nor `any`), except the answers that have no body by
// definition (204, HEAD, redirects) and those listed below. A route that
// loses its declared body fails here.
import t from 'tap'
import { join } from 'node:path'
import ts from 'typescript'
import { ROOT } from '../../helpers/server'

const GENERATED = join(ROOT, 'packages', 'client', 'src', 'generated', 'openapi.ts')

/** Successes without a body that are neither 204 nor HEAD, and why. */
const BODILESS: Record<string, string> = {
  'postOauth2V1Revoke 200': 'RFC 7009: the revocation answer is an empty 200',
}

interface Success { operation: string; status: number; bodies: Record<string, string> | undefined }

/** Every 2xx answer of `operations` with the type of each media type's body (undefined: no content). */
function successes(file: string): Success[] {
  const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)!
  const declaration = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'operations')!
  const typeOf = (symbol: ts.Symbol): ts.Type => checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(symbol, declaration))
  const out: Success[] = []
  for (const operation of checker.getTypeAtLocation(declaration).getProperties()) {
    const responses = typeOf(typeOf(operation).getProperty('responses')!)
    for (const answer of responses.getProperties()) {
      const status = Number(answer.name)
      if (!(status >= 200 && status < 300)) continue
      const content = typeOf(answer).getProperty('content')
      const contentType = content === undefined ? undefined : typeOf(content)
      const bodies = contentType === undefined || (contentType.flags & ts.TypeFlags.Never) !== 0
        ? undefined
        : Object.fromEntries(contentType.getProperties().map((media) => {
          // not typeOf: NonNullable<unknown> is {}
          const body = checker.getTypeOfSymbolAtLocation(media, declaration)
          const hollow = (body.flags & (ts.TypeFlags.Never | ts.TypeFlags.Unknown | ts.TypeFlags.Any)) !== 0
          return [media.name, hollow ? checker.typeToString(body) : 'typed']
        }))
      out.push({ operation: operation.name, status, bodies })
    }
  }
  return out
}

const found = successes(GENERATED)

t.test('the generated types cover both services', async (t) => {
  t.ok(found.length >= 88, `${found.length} success answers`)
  for (const op of ['getGraphV1TenantNodesNsTypeId', 'getGraphV1TenantNeighboursNsTypeId', 'postGraphV1TenantBulk', 'postOauth2V1Token', 'getOauth2V1AdminClients']) {
    t.ok(found.some((s) => s.operation === op), op)
  }
})

t.test('no success answer has a never or unknown body', async (t) => {
  const hollow: string[] = []
  for (const s of found) {
    const key = `${s.operation} ${s.status}`
    const bodiless = s.status === 204 || s.operation.startsWith('head') || key in BODILESS
    if (s.bodies === undefined) {
      if (!bodiless) hollow.push(`${key}: no body`)
      continue
    }
    for (const [media, type] of Object.entries(s.bodies)) if (type !== 'typed') hollow.push(`${key} ${media}: ${type}`)
  }
  t.same(hollow, [], 'every success body is typed')
})

t.test('the check itself tells a hollow body from a typed one', async (t) => {
  // the same reading of a generated file where one answer is `unknown` and one lost its content
  const sample = join(ROOT, 'test', 'fixtures', 'client', 'hollow-openapi.ts')
  const sampled = successes(sample)
  t.same(sampled.map((s) => [s.operation, s.status, s.bodies]), [
    ['typedOk', 200, { 'application/json': 'typed' }],
    ['unknownOk', 200, { 'application/json': 'unknown' }],
    ['lostBody', 200, undefined],
  ])
})
