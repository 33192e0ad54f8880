import { Command, CommanderError, Option } from 'commander';
import { EXIT, type CliIo } from './cli-io.js';
import { CliUsageError } from './command-line.js';
import { EXIT_CODES_HELP } from './help.js';
import type { CommandSpec, ParsedLine } from './registry/index.js';

/**
 * Parses one command's line with commander, from its declaration in the registry (so `--help`, an
 * unknown option and a missing operand are answered before the command's module loads), then loads
 * the module and runs it. Returns the exit code; `help` is `--help` given, exit 0.
 */
export async function runCommand(spec: CommandSpec, args: string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command('loopfleet')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(`loopfleet ${spec.name}: ${text.replace(/^error: /, '')}`),
    });
  const command = declare(program.command(spec.name), spec);
  command.action(async (...actionArgs: unknown[]) => {
    const self = actionArgs.at(-1) as Command;
    const parsed: ParsedLine = { operands: self.args, options: self.opts() };
    code = await (await spec.load())(args, io, parsed);
  });
  if (spec.passThrough !== true) refuseRepeats(args);
  try {
    await program.parseAsync([spec.name, ...args], { from: 'user' });
    return code;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return error.code === 'commander.helpDisplayed' || error.code === 'commander.help' ? EXIT.ok : EXIT.usage;
  }
}

/** Builds the commander command of a spec: operands, options, help text. */
function declare(command: Command, spec: CommandSpec): Command {
  command.description(spec.summary).showHelpAfterError(`(see: loopfleet help ${spec.name})`);
  if (spec.args !== '') command.arguments(spec.args);
  for (const option of spec.options) command.addOption(new Option(option.flags, option.description));
  if (spec.passThrough === true) command.allowUnknownOption().allowExcessArguments();
  const details = spec.details === undefined ? '' : `\n${spec.details}\n`;
  command.addHelpText('after', `${details}\n${EXIT_CODES_HELP}`);
  return command;
}

/**
 * An option given twice is a bad command line (commander would keep the last one, so
 * `--limit 5 --limit 50` would silently list 50). Options after `--` are operands.
 */
function refuseRepeats(args: readonly string[]): void {
  const seen = new Set<string>();
  for (const arg of args) {
    if (arg === '--') return;
    if (!arg.startsWith('--')) continue;
    const name = arg.slice(2).split('=')[0]!;
    if (seen.has(name)) throw new CliUsageError(`option --${name} given more than once`);
    seen.add(name);
  }
}
