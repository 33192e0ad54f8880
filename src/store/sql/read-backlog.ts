/**
 * The fleet's backlog: inputs accepted and not yet started, and how long the oldest has waited, by
 * Postgres's clock. Reads only `session_inputs_pending_age_idx` (pending inputs by `accepted_at`), so
 * it costs the backlog's size, never the table's. `count(*)::int`: the store's pool returns bigint as
 * numbers, and a backlog past 2^31 inputs is not one to count here.
 */
export const READ_BACKLOG_SQL = `SELECT count(*)::int AS pending,
       COALESCE(EXTRACT(EPOCH FROM now() - min(accepted_at)), 0)::float8 AS oldest_seconds
  FROM session_inputs
 WHERE status = 'pending'`;
