import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isLoopfleetError } from '../core/errors/index.js';
import { packageRoot } from '../store/postgres/package-paths.js';
import { EXIT, type CliIo } from './cli-io.js';
import { CliUsageError } from './command-line.js';
import { abortPendingCommand } from './commands/abort-pending.js';
import { agentsCommand } from './commands/agents.js';
import { cancelCommand } from './commands/cancel.js';
import { gatewayCommand } from './commands/gateway.js';
import { historyCommand } from './commands/history.js';
import { migrateCommand } from './commands/migrate.js';
import { resumeCommand } from './commands/resume.js';
import { sendCommand } from './commands/send.js';
import { statsCommand } from './commands/stats.js';
import { submitInputCommand } from './commands/submit-input.js';
import { tailCommand } from './commands/tail.js';
import { cancelTimerCommand, timerCommand, timersCommand } from './commands/timers.js';
import { workerCommand } from './commands/worker.js';
import { HELP } from './help.js';

type Command = (args: string[], io: CliIo) => Promise<number>;

/** A command whose module loads when it runs: the operator commands stay out of every other command's start. */
function lazy(load: () => Promise<Command>): Command {
  return async (args, io) => (await load())(args, io);
}

const COMMANDS: Record<string, Command> = {
  migrate: migrateCommand,
  worker: workerCommand,
  gateway: gatewayCommand,
  agents: agentsCommand,
  send: sendCommand,
  tail: tailCommand,
  history: historyCommand,
  stats: statsCommand,
  cancel: cancelCommand,
  resume: resumeCommand,
  'abort-pending': abortPendingCommand,
  'submit-input': submitInputCommand,
  timer: timerCommand,
  timers: timersCommand,
  'cancel-timer': cancelTimerCommand,
  budget: lazy(async () => (await import('./commands/budget.js')).budgetCommand),
  usage: lazy(async () => (await import('./commands/usage.js')).usageCommand),
  tenant: lazy(async () => (await import('./commands/tenant.js')).tenantCommand),
  help: async (args, io) => {
    if (args.length > 0) return takesNoArguments('help', args, io);
    io.stdout(HELP);
    return EXIT.ok;
  },
  version: async (args, io) => {
    if (args.length > 0) return takesNoArguments('version', args, io);
    io.stdout(`${readVersion()}\n`);
    return EXIT.ok;
  },
};

/** Every command name, as the help must list them. */
export const COMMAND_NAMES: readonly string[] = Object.freeze(Object.keys(COMMANDS));

/**
 * Runs one CLI invocation and returns its exit code. Errors are reported once, here: a typed error
 * prints its code and message (configuration errors name the variable); anything else its message.
 * A malformed session id is a bad command line (exit 2): every session id comes from the arguments.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h') return COMMANDS.help!(rest, io);
  if (name === '--version' || name === '-v') return COMMANDS.version!(rest, io);
  const command = COMMANDS[name];
  if (command === undefined) {
    io.stderr(`loopfleet: unknown command "${name}"\n\n${HELP}`);
    return EXIT.usage;
  }
  try {
    return await command(rest, io);
  } catch (error) {
    if (isLoopfleetError(error)) {
      io.stderr(`loopfleet ${name}: [${error.code}] ${error.message}\n`);
      return error.code === 'session.invalid_id' ? EXIT.usage : EXIT.failure;
    }
    if (isUsageError(error)) {
      io.stderr(`loopfleet ${name}: ${(error as Error).message}\n`);
      return EXIT.usage;
    }
    io.stderr(`loopfleet ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.failure;
  }
}

/** node:util parseArgs errors carry codes starting with ERR_PARSE_ARGS; our own checks throw CliUsageError. */
function isUsageError(error: unknown): boolean {
  if (error instanceof CliUsageError) return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

function readVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** A bad command line, like any other command's unknown argument (exit 2). */
function takesNoArguments(command: string, args: readonly string[], io: CliIo): number {
  io.stderr(`loopfleet: ${command} takes no arguments, got "${args[0]!}"\n`);
  return EXIT.usage;
}
