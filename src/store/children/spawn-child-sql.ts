/**
 * Creates a child session and its first input in one statement, fenced by the parent's lease
 * (docs/store.md, "Child sessions").
 *
 * `fence` locks the parent's row only while the caller's token is current (re-checked on the row's
 * latest version after any wait), and everything else runs only if it matched. The child is created
 * only when no session has its id (`existing`) and the parent input has fewer than the limit of
 * children (`siblings`, through `sessions_parent_idx`). A spawn of the same child committed while
 * this one waited is caught by `ON CONFLICT (id) DO NOTHING`: nothing is created and the caller
 * reports the child as existing. The child starts as an accept would create it — `next_seq` 1, its
 * first input seq 1, `pending`, `accepted_at` after the lock — and records its parent, root, depth and
 * the spawning call; it belongs to its parent's tenant.
 *
 * Params: $1 parent id, $2 lease token, $3 parent input seq, $4 tool call id, $5 child id, $6 agent,
 * $7 root id, $8 depth, $9 wait, $10 max children per input, $11 the first input's payload (JSON text).
 * Always one row: `fenced`, `existing`, `siblings` (the count the limit was checked on), `created`.
 */
export const SPAWN_CHILD_SQL = `
WITH fence AS MATERIALIZED (
  SELECT id, tenant, queue FROM sessions WHERE id = $1 AND lease_token = $2 FOR NO KEY UPDATE
),
existing AS (
  SELECT 1 FROM sessions WHERE id = $5
),
siblings AS (
  SELECT count(*)::int AS n FROM sessions WHERE parent_session_id = $1 AND spawn_input_seq = $3
),
created AS (
  INSERT INTO sessions (id, agent, tenant, queue, parent_session_id, root_session_id, depth, spawn_input_seq, spawn_tool_call_id, spawn_wait, next_seq)
  SELECT $5, $6, fence.tenant, fence.queue, fence.id, $7, $8, $3, $4, $9, 1
    FROM fence
   WHERE NOT EXISTS (SELECT 1 FROM existing) AND (SELECT n FROM siblings) < $10
  ON CONFLICT (id) DO NOTHING
  RETURNING id
),
first_input AS (
  INSERT INTO session_inputs (session_id, seq, input_id, kind, mode, payload, status, accepted_at)
  SELECT created.id, 1, 'spawn', 'send', 'queue', $11::jsonb, 'pending', clock_timestamp() FROM created
)
SELECT EXISTS (SELECT 1 FROM fence) AS fenced,
       EXISTS (SELECT 1 FROM existing) AS existing,
       (SELECT n FROM siblings) AS siblings,
       EXISTS (SELECT 1 FROM created) AS created`;
