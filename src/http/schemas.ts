// The one schema compiler (src/schema/compiler.ts), as the edge knows it.
export { CHECK, ERROR_MESSAGE, SchemaCompiler, type Check, type Validate } from '../schema/compiler'
