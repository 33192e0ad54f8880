import { MESSAGE_COLUMNS } from '../rows/message-row.js';
import { ACTIVE_MESSAGES } from '../steps/load-window-sql.js';

/**
 * A page of a session's messages, folded ones included, in seq order: a range scan of the primary
 * key (session_id, seq) from `$2` that stops after `$3` rows. Params: $1 session id, $2 the seq to
 * read after (0: from the first), $3 the page size (null: no limit, `LIMIT ALL`).
 */
export const HISTORY_PAGE_SQL = `SELECT ${MESSAGE_COLUMNS}
  FROM messages
 WHERE session_id = $1 AND seq > $2
 ORDER BY seq
 LIMIT $3`;

/**
 * A page of the active messages, in seq order, for inspection (`loopfleet history`). Its predicate is
 * that of the partial index `messages_active_idx`, like the window's, so a page costs its own rows
 * whatever the size of the compacted history. Separate from `LOAD_WINDOW_SQL`, which the agent loop
 * reads and which stays exactly as it is. Params: as {@link HISTORY_PAGE_SQL}.
 */
export const ACTIVE_HISTORY_PAGE_SQL = `SELECT ${MESSAGE_COLUMNS}
  FROM messages
 WHERE session_id = $1 AND ${ACTIVE_MESSAGES} AND seq > $2
 ORDER BY seq
 LIMIT $3`;
