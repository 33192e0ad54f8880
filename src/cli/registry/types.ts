import type { CliIo } from '../cli-io.js';

/** The command line as the registry's declaration parsed it: operands in order, options by camelCase name. */
export interface ParsedLine {
  operands: string[];
  options: Record<string, unknown>;
}

/** A command's work: its raw arguments (after the name), where to write, and the parsed line. Returns the exit code. */
export type CommandRun = (args: string[], io: CliIo, parsed: ParsedLine) => Promise<number>;

/** One option as its help shows it: commander's flags syntax (`--limit <n>`, `--wait [duration]`). */
export interface OptionSpec {
  flags: string;
  description: string;
}

/**
 * What the help needs to know of a command, and how to load it: the registry holds only these, so
 * printing help or parsing a command line loads no command module, no driver and no SDK.
 */
export interface CommandSpec {
  name: string;
  group: 'Fleet' | 'Sessions' | 'Timers' | 'Operators';
  /** Operands in commander's syntax: `<session> <text>`, `[seq]`. */
  args: string;
  /** One line for the overview. */
  summary: string;
  /** More, shown by `loopfleet help <name>` after the options. */
  details?: string;
  options: readonly OptionSpec[];
  /** Takes an action word with options of its own (`budget set …`): the command module checks those. */
  passThrough?: boolean;
  load: () => Promise<CommandRun>;
}

/** Every command prints JSON on stdout with it: the same words everywhere. */
export const JSON_OPTION: OptionSpec = { flags: '--json', description: 'print JSON on stdout (one object, or one a line for lists and streams)' };
