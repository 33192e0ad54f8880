import type { StoredMessage } from '../../core/messages.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { decodeMessage } from '../rows/message-row.js';
import { LOAD_WINDOW_SQL } from './load-window-sql.js';

/**
 * The session's active messages in seq order, each validated (`state.corrupt` on a row the loop
 * would not understand). Reads only the partial index of active rows, never the compacted history.
 */
export async function loadWindow(db: Queryable, sessionId: string): Promise<StoredMessage[]> {
  const id = assertSessionId(sessionId);
  const result = await db.query(LOAD_WINDOW_SQL, [id]);
  return result.rows.map((row: unknown) => decodeMessage(id, row));
}
