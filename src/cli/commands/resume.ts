import { SessionNotFoundError } from '../../core/errors/index.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';
import { withQueue } from '../connect.js';
import { acceptedThenFollow } from './send.js';

/**
 * `loopfleet resume <session>`: queues a `resume` input — the session finishes its open tool calls
 * and runs another round. Prints `accepted <session> seq <n>`. Refuses a session that does not exist
 * (not found, exit 3): a resume would otherwise create an empty one.
 */
export async function resumeCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) {
    io.stderr('loopfleet resume: expected one session\nusage: loopfleet resume <session> [--json]\n');
    return EXIT.usage;
  }
  return withQueue(io, async (queue) => {
    if ((await queue.sessions.get(sessionId)) === null) throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
    return acceptedThenFollow(await queue.add('resume', { sessionId }), { follow: false, json: values.json }, io);
  });
}
