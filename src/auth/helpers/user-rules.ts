// What a username, an email address and a password may be: the admin API
// and the bootstrap file hold users to the same rules.
export const EMAIL = /^[^\s@"<>]{1,128}@[^\s@"<>]{1,128}$/
export const USERNAME = /^[^\x00-\x20\x7f]{1,128}$/
export const PASSWORD = /^[^\x00-\x1f\x7f]{8,1024}$/
