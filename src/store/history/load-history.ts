import type { StoredMessage } from '../../core/messages.js';
import type { LoadHistoryOptions } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { resolveHistoryOptions } from './history-options.js';
import type { Queryable } from '../postgres/queryable.js';
import { decodeMessage } from '../rows/message-row.js';
import { ACTIVE_HISTORY_PAGE_SQL, HISTORY_PAGE_SQL } from './load-history-sql.js';

/**
 * Messages for inspection (`loopfleet history`), validated like the window: all of them, or the page
 * `afterSeq` / `limit` name, read with the bound in the SQL so a page costs its rows only. Raw SQL
 * rather than drizzle: drizzle's jsonb decoding re-parses a top-level JSON string, so a text message
 * such as "42" would come back as the number 42.
 */
export async function loadHistory(db: Queryable, sessionId: string, options?: LoadHistoryOptions): Promise<StoredMessage[]> {
  const id = assertSessionId(sessionId);
  const page = resolveHistoryOptions(options);
  const text = page.includeCompacted ? HISTORY_PAGE_SQL : ACTIVE_HISTORY_PAGE_SQL;
  const result = await db.query(text, [id, page.afterSeq, page.limit]);
  return result.rows.map((row: unknown) => decodeMessage(id, row));
}
