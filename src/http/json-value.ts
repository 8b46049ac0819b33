// Any JSON value, for the API description of a body the service hands on as
// it is (a property's value, an upstream's answer): typed generators then
// see a JSON value, not `unknown`.
import { Type, type TSchema } from '@sinclair/typebox'

export const jsonValue = (description: string): TSchema => Type.Union([
  Type.String(), Type.Number(), Type.Boolean(), Type.Null(), Type.Array(Type.Unknown()), Type.Record(Type.String(), Type.Unknown()),
], { description })
