#!/usr/bin/env node
// One command line for operators (package.json `bin`): `profile-graph
// <command> [options]`, each command the same program as its entry point
// (`serve` is `node dist/src/main.js`, `backup` is `node dist/src/backup.js`,
// ...), so both ways stay the same. Restoring a backup is starting a server
// on the copy (`serve --data-dir <copy>`), not a command of its own.
import { join } from 'node:path'
import { setInvokedAs } from '../config/load-config'

interface Command { file: string; summary: string }

/** Loaded by path when chosen: a command module runs when it is loaded, reading process.argv. */
const COMMANDS: Record<string, Command> = {
  serve: { file: join(__dirname, '..', 'main.js'), summary: 'run the server (restore: serve on a backup copy)' },
  backup: { file: join(__dirname, 'backup.js'), summary: 'copy the data directory, online or stopped' },
  'export-tenant': { file: join(__dirname, 'export-tenant.js'), summary: "write one tenant's data to a file" },
  'import-tenant': { file: join(__dirname, 'import-tenant.js'), summary: 'load a tenant export into a server' },
  'rotate-master-key': { file: join(__dirname, 'rotate-master-key.js'), summary: 'rewrap every key under a new master key (server stopped)' },
  'rotate-signing-key': { file: join(__dirname, 'rotate-signing-key.js'), summary: 'make a new ID token signing key current' },
}

export function cliUsage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length))
  return [
    'usage: profile-graph <command> [options]',
    '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    "'profile-graph <command> --help' lists a command's options.",
  ].join('\n')
}

function run(argv: readonly string[]): void {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(cliUsage())
    return
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    console.error(`error: unknown command "${name}"\n\n${cliUsage()}`)
    process.exitCode = 2
    return
  }
  setInvokedAs(`profile-graph ${name}`)
  process.argv = [process.argv[0]!, command.file, ...rest]
  require(command.file)
}

if (require.main === module) run(process.argv.slice(2))
