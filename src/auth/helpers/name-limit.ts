// The longest id, client_id, username or role name the admin API and the
// bootstrap file accept. Presented names are checked against it before they
// are looked up: a longer one cannot exist, and unbounded input must never
// reach an LMDB key (1978 bytes at most). 128 UTF-16 units take at most 384
// bytes in a key (src/store/key-encoding.ts), so every such key fits.
export const MAX_NAME_CHARS = 128

/** The message for a name past the limit, or undefined when it is within. */
export function nameTooLong(what: string, value: string): string | undefined {
  return value.length > MAX_NAME_CHARS ? `${what} is longer than ${MAX_NAME_CHARS} characters` : undefined
}
