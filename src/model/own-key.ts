// Look-ups in plain objects keyed by what a client names (property names,
// types, tenants, role names): a plain object answers "constructor" or
// "toString" from Object.prototype, so a name a client chose must only ever
// find what the object holds itself.

/** What `record` holds under `key` itself; undefined for a key it only inherits. */
export function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined
}
