import { SessionQueue } from '../../producer/session-queue.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';

/**
 * `loopfleet cancel <session>`: cancels the session's running input (it ends `cancelled`, keeping
 * what it produced). Exits 1 when there is no such session.
 */
export async function cancelCommand(args: string[], io: CliIo): Promise<number> {
  const { positionals } = parseCommandLine({ args, allowPositionals: true, options: {} });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) {
    io.stderr('loopfleet cancel: expected one session\nusage: loopfleet cancel <session>\n');
    return EXIT.usage;
  }
  const queue = SessionQueue.fromEnv(io.env);
  try {
    if (!(await queue.cancel(sessionId))) {
      io.stderr(`loopfleet cancel: no session ${sessionId}\n`);
      return EXIT.failure;
    }
    io.stdout(`cancel requested for ${sessionId}\n`);
    return EXIT.ok;
  } finally {
    await queue.close();
  }
}
