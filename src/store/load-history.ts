import type { StoredMessage } from '../core/messages.js';
import type { LoadHistoryOptions } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import type { Queryable } from './queryable.js';
import { decodeMessage } from './rows/message-row.js';
import { LOAD_FULL_HISTORY_SQL } from './sql/load-history.js';
import { LOAD_WINDOW_SQL } from './sql/load-window.js';

/**
 * Messages for inspection (`loopfleet history`), validated like the window. Raw SQL rather than
 * drizzle: drizzle's jsonb decoding re-parses a top-level JSON string, so a text message such as
 * "42" would come back as the number 42.
 */
export async function loadHistory(db: Queryable, sessionId: string, options: LoadHistoryOptions = {}): Promise<StoredMessage[]> {
  const id = assertSessionId(sessionId);
  const text = options.includeCompacted === true ? LOAD_FULL_HISTORY_SQL : LOAD_WINDOW_SQL;
  const result = await db.query(text, [id]);
  return result.rows.map((row: unknown) => decodeMessage(id, row));
}
