import { z } from 'zod';
import type { DeletedSession } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { DELETE_SESSION_SQL } from './delete-session-sql.js';

const token = z.number().int().nonnegative();
const deletedRowSchema = z.object({
  leaseToken: token.nullable(),
  descendants: z.array(z.object({ sessionId: z.string().min(1), leaseToken: token })),
});

/**
 * Deletes a session with its tree ({@link DELETE_SESSION_SQL}); its inputs, messages, ledger, timers,
 * usage and compactions go with it, and its child sessions with theirs (foreign keys cascade).
 * Answers its last lease token and each descendant's, or null when there was no such session. The
 * row locks the delete takes order it after any lease taken before: no holder of these sessions has
 * a larger token, and every lease taken later (of a session created again under an id) has one.
 */
export async function deleteSession(db: Queryable, sessionId: string): Promise<DeletedSession | null> {
  const id = assertSessionId(sessionId);
  const result = await db.query(DELETE_SESSION_SQL, [id]);
  const row = parseRow(deletedRowSchema, result.rows[0], `deletion of session ${id}`);
  return row.leaseToken === null ? null : { leaseToken: row.leaseToken, descendants: row.descendants };
}
