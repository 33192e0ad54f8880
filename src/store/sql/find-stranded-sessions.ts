/**
 * Sessions the sweeper must wake: open (pending or running) inputs older than the grace period and no
 * live lease. A `running` input with a lapsed lease is a worker that died mid-run.
 * Params: $1 grace in milliseconds, $2 limit.
 */
export const FIND_STRANDED_SESSIONS_SQL = `
SELECT DISTINCT i.session_id AS "sessionId"
  FROM session_inputs i
  JOIN sessions s ON s.id = i.session_id
 WHERE i.status IN ('pending', 'running')
   AND i.accepted_at < now() - ($1::bigint * interval '1 millisecond')
   AND (s.lease_expires_at IS NULL OR s.lease_expires_at <= now())
 LIMIT $2`;
