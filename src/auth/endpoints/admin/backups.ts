// POST /oauth2/v1/admin/backups {"to": "/absolute/new/dir"}: an online backup
// of the data directory into a new directory on the server's host
// (src/backups/take-backup.ts); the same as `node dist/src/backup.js`.
import { ApiError } from '../../../core/errors'
import { ConfigError } from '../../../config/load-config'
import { bodyReader } from '../../helpers/json-body'
import { BackupBody } from './bodies'
import { admin, reply, settle } from './common'
import { ADMIN } from '../answers'

const readBackup = bodyReader(BackupBody)

export const createBackup = admin({
  body: 'json',
  documented: BackupBody,
  summary: 'Take an online backup of the data directory',
  answers: { 201: ADMIN.backup },
  errors: ['validation_violation'],
  handle(s, ex, { body }) {
    const { to } = readBackup(body)
    settle(ex, async () => {
      try {
        reply(ex, 201, await s.backup(to))
      } catch (err) {
        // A target that is not absolute or not empty is the caller's to fix.
        if (err instanceof ConfigError) throw new ApiError('validation_violation', err.message)
        throw err
      }
    })
  },
})
