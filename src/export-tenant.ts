// The old entry point, kept working: `node dist/src/export-tenant.js` runs the command (src/commands/export-tenant.ts).
import './commands/export-tenant'
