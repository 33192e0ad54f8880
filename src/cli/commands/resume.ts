import { SessionQueue } from '../../producer/session-queue.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';

/**
 * `loopfleet resume <session>`: queues a `resume` input — the session finishes its open tool calls
 * and runs another round. Prints `accepted <session> seq <n>`.
 */
export async function resumeCommand(args: string[], io: CliIo): Promise<number> {
  const { positionals } = parseCommandLine({ args, allowPositionals: true, options: {} });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) {
    io.stderr('loopfleet resume: expected one session\nusage: loopfleet resume <session>\n');
    return EXIT.usage;
  }
  const queue = SessionQueue.fromEnv(io.env);
  try {
    const handle = await queue.add('resume', { sessionId });
    io.stdout(`accepted ${handle.sessionId} seq ${handle.seq}\n`);
    return EXIT.ok;
  } finally {
    await queue.close();
  }
}
