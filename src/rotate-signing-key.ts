// The old entry point, kept working: `node dist/src/rotate-signing-key.js` runs the command (src/commands/rotate-signing-key.ts).
import './commands/rotate-signing-key'
