import { lockedSession, lockSessionsCte } from '../fencing/lock-sessions-sql.js';

/**
 * The sessions below `$1` (children, theirs …) by `parent_session_id` (`sessions_parent_idx`), as
 * `tree (session_id)`. `UNION` stops at a row seen before, so even a corrupt cycle ends.
 */
export const DESCENDANTS_CTE = `tree(session_id) AS (
  SELECT c.id FROM sessions AS c WHERE c.parent_session_id = $1
  UNION
  SELECT c.id FROM sessions AS c JOIN tree ON c.parent_session_id = tree.session_id
)`;

/**
 * The cancel request of a session and its tree, in one statement: the session's flag as
 * `requestCancel` sets it (an earlier request keeps its time), and on every session below it the
 * cancel flag and `cascade_cancelled_at`, each keeping an earlier time. The rows are locked in session
 * id order first, as batched statements lock them (`../fencing/lock-sessions-sql.ts`), so this never
 * deadlocks with claims or steps of the tree's sessions. The tree is read on the statement's
 * snapshot: a child spawned while it ran is not in it (its parent's flag is, which stops its run).
 * Params: $1 session id. Always one row: `requestedAt` and `tenant` (null when there is no such session) and the
 * descendants' ids (`descendants`, empty when none).
 */
export const REQUEST_CANCEL_TREE_SQL = `
WITH RECURSIVE ${DESCENDANTS_CTE},
targets AS (
  SELECT $1::text AS session_id
  UNION
  SELECT session_id FROM tree
),
${lockSessionsCte('targets', 'true')},
root AS (
  UPDATE sessions AS s
     SET cancel_requested_at = coalesce(s.cancel_requested_at, now()), updated_at = now()
   WHERE s.id = $1 AND ${lockedSession('s')}
  RETURNING s.cancel_requested_at, s.tenant
),
below AS (
  UPDATE sessions AS s
     SET cancel_requested_at = coalesce(s.cancel_requested_at, now()),
         cascade_cancelled_at = coalesce(s.cascade_cancelled_at, now()),
         updated_at = now()
    FROM tree
   WHERE s.id = tree.session_id AND s.id <> $1 AND ${lockedSession('s')} AND EXISTS (SELECT 1 FROM root)
  RETURNING s.id
)
SELECT (SELECT cancel_requested_at FROM root) AS "requestedAt", (SELECT tenant FROM root) AS tenant,
       coalesce((SELECT array_agg(below.id ORDER BY below.id COLLATE "C") FROM below), '{}') AS descendants`;
