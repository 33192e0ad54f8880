import { MAX_ABORT_REASON_LENGTH } from '../limits.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';
import { withQueue } from '../connect.js';
import { acceptedThenFollow } from './send.js';

/**
 * `loopfleet abort-pending <session> [--reason <text>]`: closes every open tool call and question of
 * the session with an `<aborted: reason>` result. Prints `accepted <session> seq <n>`.
 */
export async function abortPendingCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { reason: { type: 'string', default: 'aborted' }, json: { type: 'boolean', default: false } } });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) return usage(io, 'expected one session');
  if (values.reason.length > MAX_ABORT_REASON_LENGTH) return usage(io, `--reason must be at most ${MAX_ABORT_REASON_LENGTH} characters, got ${values.reason.length}`);
  return withQueue(io, async (queue) => acceptedThenFollow(await queue.abortPending(sessionId, values.reason), { follow: false, json: values.json }, io));
}

function usage(io: CliIo, problem: string): number {
  io.stderr(`loopfleet abort-pending: ${problem}\nusage: loopfleet abort-pending <session> [--reason <text>] [--json]\n`);
  return EXIT.usage;
}
