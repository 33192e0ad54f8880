/**
 * Replaces a worker's rows in one statement (so one transaction): the agents it no longer serves are
 * deleted, the others inserted or overwritten, registered and seen now. (A DELETE of all of them
 * followed by an INSERT cannot share a statement: the insert would meet the deleted keys.)
 *
 * Params: $1 worker id, $2 a JSON array of `{ name, version, provider, model, tools }`.
 */
export const REGISTER_AGENTS_SQL = `
WITH agents AS (
  SELECT * FROM jsonb_to_recordset($2::jsonb) AS a(name text, version text, provider text, model text, tools jsonb)
),
gone AS (
  DELETE FROM agent_registry r WHERE r.worker_id = $1 AND r.name NOT IN (SELECT name FROM agents)
)
INSERT INTO agent_registry (worker_id, name, version, provider, model, tools, registered_at, seen_at)
SELECT $1, agents.name, agents.version, agents.provider, agents.model, agents.tools, now(), now() FROM agents
ON CONFLICT (worker_id, name) DO UPDATE
  SET version = EXCLUDED.version, provider = EXCLUDED.provider, model = EXCLUDED.model, tools = EXCLUDED.tools,
      registered_at = EXCLUDED.registered_at, seen_at = EXCLUDED.seen_at, stopped_at = NULL`;
