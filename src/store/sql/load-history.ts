import { MESSAGE_COLUMNS } from '../rows/message-row.js';

/** Every message of a session, folded ones included, in seq order. Params: $1 session id. */
export const LOAD_FULL_HISTORY_SQL = `SELECT ${MESSAGE_COLUMNS}
  FROM messages
 WHERE session_id = $1
 ORDER BY seq`;
