import { MAX_INTERACTION_ID_LENGTH } from '../limits.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';
import { withQueue } from '../connect.js';
import { parseSubmitValue } from '../submit-value.js';
import { acceptedThenFollow } from './send.js';

/**
 * `loopfleet submit-input <session> <interaction> <value>`: answers a `request_user_input` question.
 * The value is parsed as JSON when it parses (`42`, `true`, `{"a":1}`), else taken as a string; so
 * is a value whose numbers a JS number would change (`12345678901234567890`): see `parseSubmitValue`.
 * Prints `accepted <session> seq <n>`; `--follow` streams the reply as `send --follow` does.
 */
export async function submitInputCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { follow: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } } });
  const [sessionId, interactionId, raw, ...extra] = positionals;
  if (sessionId === undefined || interactionId === undefined || raw === undefined || extra.length > 0) return usage(io, 'expected a session, an interaction id and a value');
  if (interactionId === '' || interactionId.length > MAX_INTERACTION_ID_LENGTH) return usage(io, `the interaction id must be 1 to ${MAX_INTERACTION_ID_LENGTH} characters`);
  return withQueue(io, async (queue) => acceptedThenFollow(await queue.submitInput(sessionId, interactionId, parseSubmitValue(raw)), { follow: values.follow, json: values.json }, io));
}

function usage(io: CliIo, problem: string): number {
  io.stderr(`loopfleet submit-input: ${problem}\nusage: loopfleet submit-input <session> <interaction> <value> [--follow] [--json]\n`);
  return EXIT.usage;
}
