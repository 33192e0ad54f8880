import { TOOL_CALL_COLUMNS } from '../rows/tool-call-row.js';

/** The predicate of the partial index `tool_calls_open_idx`: every open-ledger read uses exactly this. */
export const OPEN_TOOL_CALLS = "status IN ('started', 'in_doubt')";

/**
 * Ledger rows whose outcome is unknown or pending, through the partial index `tool_calls_open_idx`
 * (same predicate). Params: $1 session id.
 */
export const LOAD_OPEN_TOOL_CALLS_SQL = `SELECT ${TOOL_CALL_COLUMNS}
  FROM tool_calls
 WHERE session_id = $1 AND ${OPEN_TOOL_CALLS}
 ORDER BY started_at, tool_call_id`;
