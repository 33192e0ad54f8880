import { MESSAGE_COLUMNS } from '../rows/message-row.js';

/** The predicate of the partial index `messages_active_idx`: every window read uses exactly this. */
export const ACTIVE_MESSAGES = "state = 'active'";

/**
 * The active window. Its predicate is exactly that of the partial index `messages_active_idx`
 * (session_id, seq) WHERE state = 'active', which also yields seq order: compacted rows are never
 * read, so the cost does not grow with the folded history. Exported so the plan test
 * explains this very text. Params: $1 session id.
 */
export const LOAD_WINDOW_SQL = `SELECT ${MESSAGE_COLUMNS}
  FROM messages
 WHERE session_id = $1 AND ${ACTIVE_MESSAGES}
 ORDER BY seq`;
