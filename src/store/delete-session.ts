import { eq } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { assertSessionId } from '../core/session-id.js';
import { sessions } from './schema/index.js';

/**
 * Deletes a session; its inputs, messages, ledger, timers, usage and compactions go with it (foreign
 * keys cascade). Returns false when there was no such session.
 */
export async function deleteSession(db: NodePgDatabase, sessionId: string): Promise<boolean> {
  const id = assertSessionId(sessionId);
  const deleted = await db.delete(sessions).where(eq(sessions.id, id)).returning({ id: sessions.id });
  return deleted.length > 0;
}
