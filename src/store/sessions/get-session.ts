import type { SessionRecord } from '../../core/session-types.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { decodeSession } from '../rows/session-row.js';
import { SELECT_SESSION_SQL } from './select-session-sql.js';

/** The session, validated, or null when there is none. Throws `session.invalid_id` for a bad id. */
export async function getSession(db: Queryable, sessionId: string): Promise<SessionRecord | null> {
  const id = assertSessionId(sessionId);
  const result = await db.query({ name: 'loopfleet_get_session', text: SELECT_SESSION_SQL, values: [id] });
  const row: unknown = result.rows[0];
  return row === undefined ? null : decodeSession(row);
}
