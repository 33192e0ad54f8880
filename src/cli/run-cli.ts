import { readFileSync } from 'node:fs';
import { isLoopfleetError } from '../core/errors/loopfleet-error.js';
import { EXIT, NOT_FOUND_CODES, type CliIo } from './cli-io.js';
import { CliUsageError } from './command-line.js';
import { helpJson, overviewHelp } from './help.js';
import { COMMAND_NAMES, findCommand } from './registry/index.js';

export { COMMAND_NAMES };

/**
 * Runs one CLI invocation and returns its exit code. `help` and `version` are answered here, from
 * the registry alone; any other command's module loads only when it runs (`runCommand`). Errors are
 * reported once, here: a typed error prints its code and message (configuration errors name the
 * variable; "not found" codes exit {@link EXIT.notFound}); anything else its message. A malformed
 * session id is a bad command line (exit 2): every session id comes from the arguments.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') return help(rest, io);
  if (name === '--version' || name === '-v' || name === 'version') return version(rest, io);
  const spec = findCommand(name);
  if (spec === undefined) {
    io.stderr(`loopfleet: unknown command "${name}"\n\n${overviewHelp()}`);
    return EXIT.usage;
  }
  try {
    const { runCommand } = await import('./command-runner.js');
    return await runCommand(spec, rest, io);
  } catch (error) {
    return report(name, error, io);
  }
}

function report(name: string, error: unknown, io: CliIo): number {
  if (isLoopfleetError(error)) {
    io.stderr(`loopfleet ${name}: [${error.code}] ${error.message}\n`);
    if (error.code === 'session.invalid_id') return EXIT.usage;
    return NOT_FOUND_CODES.has(error.code) ? EXIT.notFound : EXIT.failure;
  }
  if (isUsageError(error)) {
    io.stderr(`loopfleet ${name}: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  io.stderr(`loopfleet ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT.failure;
}

/** `help`, `help --json`, `help <command>` (that command's own `--help`). */
async function help(args: string[], io: CliIo): Promise<number> {
  const operands = args.filter((arg) => arg !== '--json' && arg !== '--help' && arg !== '-h');
  if (operands.length === 0 || (operands.length === 1 && operands[0] === 'help')) {
    io.stdout(args.includes('--json') ? helpJson() : overviewHelp());
    return EXIT.ok;
  }
  if (operands.length === 1 && operands[0] === 'version') {
    io.stdout(VERSION_HELP);
    return EXIT.ok;
  }
  const spec = operands.length === 1 ? findCommand(operands[0]!) : undefined;
  if (spec === undefined) {
    io.stderr(`loopfleet help: ${operands.length === 1 ? `unknown command "${operands[0]!}"` : 'expected at most one command'}\n(run loopfleet help for the list)\n`);
    return EXIT.usage;
  }
  const { runCommand } = await import('./command-runner.js');
  return runCommand(spec, ['--help'], io);
}

const VERSION_HELP = 'Usage: loopfleet version [--json]\n\nPrint the version (also: -v, --version). --json: {"version": …}.\n';

function version(args: string[], io: CliIo): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(VERSION_HELP);
    return Promise.resolve(EXIT.ok);
  }
  const extra = args.find((arg) => arg !== '--json');
  if (extra !== undefined) {
    io.stderr(`loopfleet: version takes no arguments, got "${extra}"\n`);
    return Promise.resolve(EXIT.usage);
  }
  const value = readVersion();
  io.stdout(args.includes('--json') ? `${JSON.stringify({ version: value })}\n` : `${value}\n`);
  return Promise.resolve(EXIT.ok);
}

/** node:util parseArgs errors carry codes starting with ERR_PARSE_ARGS; our own checks throw CliUsageError. */
function isUsageError(error: unknown): boolean {
  if (error instanceof CliUsageError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

/** From the package's own package.json: two folders up from src/cli and from dist/cli alike. */
function readVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
