// The old entry point, kept working: `node dist/src/backup.js` runs the command (src/commands/backup.ts).
import './commands/backup'
