import { z } from 'zod';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { READ_CANCEL_REQUEST_SQL } from './read-cancel-request-sql.js';

const requestSchema = z.object({ requestedAt: z.date().nullable() });

/**
 * When the session's durable cancel request was made, or null when none waits or there is no such
 * session: the one column a holder needs to tell a real cancel from a forged pub/sub message, read
 * without the rest of the session row.
 */
export async function readCancelRequest(db: Queryable, sessionId: string): Promise<Date | null> {
  const id = assertSessionId(sessionId);
  const result = await db.query({ name: 'loopfleet_read_cancel_request', text: READ_CANCEL_REQUEST_SQL, values: [id] });
  const row: unknown = result.rows[0];
  return row === undefined ? null : parseRow(requestSchema, row, `session ${id}`).requestedAt;
}
