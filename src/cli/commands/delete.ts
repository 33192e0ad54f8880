import { SessionNotFoundError } from '../../core/errors/index.js';
import type { CliIo } from '../cli-io.js';
import { EXIT } from '../cli-io.js';
import { withQueue } from '../connect.js';
import type { ParsedLine } from '../registry/index.js';

/**
 * `loopfleet delete <session>`: deletes the session with everything it owns in Postgres and its
 * event stream (`SessionAdmin.delete`); its child sessions go with it. Not found (exit 3): no such session.
 */
export async function deleteCommand(_args: string[], io: CliIo, parsed: ParsedLine): Promise<number> {
  const [sessionId] = parsed.operands as [string];
  return withQueue(io, async (queue) => {
    if (!(await queue.sessions.delete(sessionId))) throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
    io.stdout(parsed.options.json === true ? `${JSON.stringify({ sessionId, deleted: true })}\n` : `deleted ${sessionId}\n`);
    return EXIT.ok;
  });
}
