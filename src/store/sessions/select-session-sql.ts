import { SESSION_COLUMNS } from '../rows/session-row.js';

/** One session row. Params: $1 session id. */
export const SELECT_SESSION_SQL = `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`;
