// A node or relation that cannot be decrypted (its consent revoked, or its
// key destroyed) is answered as {LOCKED: true}: this tells it from the rest.
export function isLocked<T extends object>(element: T | { LOCKED: true }): element is { LOCKED: true } {
  return 'LOCKED' in element && element.LOCKED === true
}
