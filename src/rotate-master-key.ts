// The old entry point, kept working: `node dist/src/rotate-master-key.js` runs the command (src/commands/rotate-master-key.ts).
import './commands/rotate-master-key'
