import { FLEET_COMMANDS } from './fleet.js';
import { OPERATOR_COMMANDS } from './operators.js';
import { SESSION_COMMANDS } from './sessions.js';
import type { CommandSpec } from './types.js';

export type { CommandRun, CommandSpec, OptionSpec, ParsedLine } from './types.js';

/** Every command but `help` and `version` (which the dispatcher answers itself), in the help's order. */
export const COMMAND_SPECS: readonly CommandSpec[] = [...FLEET_COMMANDS, ...SESSION_COMMANDS, ...OPERATOR_COMMANDS];

/** The command of that name, or undefined. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMAND_SPECS.find((spec) => spec.name === name);
}

/** Every command name, as the help lists them. */
export const COMMAND_NAMES: readonly string[] = Object.freeze([...COMMAND_SPECS.map((spec) => spec.name), 'help', 'version']);
