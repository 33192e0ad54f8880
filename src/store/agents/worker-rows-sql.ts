/** Marks a worker seen now. Params: $1 worker id. Returns a row per agent of the worker. */
export const TOUCH_WORKER_SQL = `UPDATE agent_registry SET seen_at = now() WHERE worker_id = $1 RETURNING name`;

/**
 * Marks a worker's rows stopped; they stay until pruned, so its agents are still known to producers
 * while the fleet restarts. Params: $1 worker id.
 */
export const UNREGISTER_WORKER_SQL = `UPDATE agent_registry SET stopped_at = now() WHERE worker_id = $1 AND stopped_at IS NULL`;

/**
 * Deletes the rows of workers not seen for a while (reads `agent_registry_seen_idx`); returns the
 * number of distinct workers deleted. Params: $1 milliseconds.
 */
export const PRUNE_WORKERS_SQL = `
WITH gone AS (
  DELETE FROM agent_registry WHERE seen_at < now() - $1::bigint * interval '1 millisecond' RETURNING worker_id
)
SELECT count(DISTINCT worker_id)::int AS workers FROM gone`;
