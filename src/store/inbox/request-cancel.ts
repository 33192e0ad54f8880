import { eq, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { z } from 'zod';
import { SessionNotFoundError } from '../../core/errors/index.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { parseRow } from '../rows/parse-row.js';
import { sessions } from '../schema/index.js';

const requestedSchema = z.object({ requestedAt: z.date() });

/**
 * Sets the durable copy of a cancel request; the live signal goes over Redis. A
 * request already waiting keeps its original time. Not fenced: anyone may ask. `session.not_found`
 * when there is no such session.
 */
export async function requestCancel(db: NodePgDatabase, sessionId: string): Promise<Date> {
  const id = assertSessionId(sessionId);
  const rows = await db
    .update(sessions)
    .set({ cancelRequestedAt: sql`coalesce(${sessions.cancelRequestedAt}, now())`, updatedAt: sql`now()` })
    .where(eq(sessions.id, id))
    .returning({ requestedAt: sessions.cancelRequestedAt });
  if (rows[0] === undefined) throw new SessionNotFoundError(`session ${id} does not exist`, { details: { sessionId: id } });
  return parseRow(requestedSchema, rows[0], `session ${id}`).requestedAt;
}
