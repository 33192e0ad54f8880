import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';
import { withQueue } from '../connect.js';

/**
 * `loopfleet cancel <session>`: cancels the session's running input (it ends `cancelled`, keeping
 * what it produced). Not found (exit 3) when there is no such session.
 */
export async function cancelCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) {
    io.stderr('loopfleet cancel: expected one session\nusage: loopfleet cancel <session> [--json]\n');
    return EXIT.usage;
  }
  return withQueue(io, async (queue) => {
    if (!(await queue.cancel(sessionId))) {
      io.stderr(`loopfleet cancel: no session ${sessionId}\n`);
      return EXIT.notFound;
    }
    io.stdout(values.json ? `${JSON.stringify({ sessionId, cancelRequested: true })}\n` : `cancel requested for ${sessionId}\n`);
    return EXIT.ok;
  });
}
