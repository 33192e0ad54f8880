import { eq } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { DeletedSession } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { sessions } from '../schema/index.js';

/**
 * Deletes a session; its inputs, messages, ledger, timers, usage and compactions go with it (foreign
 * keys cascade). Answers its last lease token, or null when there was no such session. The row lock
 * the delete takes orders it after any lease taken before: no holder of this session has a larger
 * token, and every lease taken later (of a session created again under the id) has one.
 */
export async function deleteSession(db: NodePgDatabase, sessionId: string): Promise<DeletedSession | null> {
  const id = assertSessionId(sessionId);
  const deleted = await db.delete(sessions).where(eq(sessions.id, id)).returning({ leaseToken: sessions.leaseToken });
  const row = deleted[0];
  return row === undefined ? null : { leaseToken: row.leaseToken };
}
