import { MAX_ABORT_REASON_LENGTH } from '../../core/input-payload.js';
import { SessionQueue } from '../../producer/session-queue.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';

/**
 * `loopfleet abort-pending <session> [--reason <text>]`: closes every open tool call and question of
 * the session with an `<aborted: reason>` result. Prints `accepted <session> seq <n>`.
 */
export async function abortPendingCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { reason: { type: 'string', default: 'aborted' } } });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) return usage(io, 'expected one session');
  if (values.reason.length > MAX_ABORT_REASON_LENGTH) return usage(io, `--reason must be at most ${MAX_ABORT_REASON_LENGTH} characters, got ${values.reason.length}`);
  const queue = SessionQueue.fromEnv(io.env);
  try {
    const handle = await queue.abortPending(sessionId, values.reason);
    io.stdout(`accepted ${handle.sessionId} seq ${handle.seq}\n`);
    return EXIT.ok;
  } finally {
    await queue.close();
  }
}

function usage(io: CliIo, problem: string): number {
  io.stderr(`loopfleet abort-pending: ${problem}\nusage: loopfleet abort-pending <session> [--reason <text>]\n`);
  return EXIT.usage;
}
