// The old entry point, kept working: `node dist/src/import-tenant.js` runs the command (src/commands/import-tenant.ts).
import './commands/import-tenant'
