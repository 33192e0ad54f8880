import type { SessionRecord } from '../../core/session-types.js';
import type { CliIo } from '../cli-io.js';

/**
 * For a child session (docs/child-sessions.md), one line on stderr saying whose child it is —
 * `# child of <parent> (call <id>, depth <n>, root <root>)` — before `history` or `tail` prints it;
 * nothing for any other session, or none. On stderr, so what stdout carries stays the same.
 */
export async function printChildHeader(getSession: (sessionId: string) => Promise<SessionRecord | null>, sessionId: string, io: CliIo): Promise<void> {
  const session = await getSession(sessionId);
  if (session === null || session.parentSessionId === null) return;
  const call = session.spawn === null ? '' : `call ${session.spawn.toolCallId}, `;
  io.stderr(`# child of ${session.parentSessionId} (${call}agent ${session.agent}, depth ${session.depth}, root ${session.rootSessionId})\n`);
}
