import { DESCENDANTS_CTE } from '../inbox/request-cancel-tree-sql.js';

/**
 * Deletes a session and its tree in one statement. The foreign keys cascade: its inputs, messages,
 * ledger, timers, usage and compactions go, and so do its child sessions (`parent_session_id`), with
 * theirs, and the session budgets of all of them. Before the delete, the session and its descendants are locked in session id order (the
 * order batched statements lock in, `../fencing/lock-sessions-sql.ts`), so each lease token read is
 * that of the row's latest version: every lease taken before the delete has that token or an older
 * one. `FOR UPDATE` is the lock the delete takes anyway.
 * Params: $1 session id. Always one row: `leaseToken` (null when there was no such session) and
 * `descendants`, a JSON array of `{ sessionId, leaseToken }` (empty when none).
 */
export const DELETE_SESSION_SQL = `
WITH RECURSIVE ${DESCENDANTS_CTE},
targets AS (
  SELECT $1::text AS session_id
  UNION
  SELECT session_id FROM tree
),
locked AS MATERIALIZED (
  SELECT s.id, s.lease_token
    FROM sessions AS s
   WHERE s.id = ANY(ARRAY(SELECT targets.session_id FROM targets))
   ORDER BY s.id COLLATE "C"
     FOR UPDATE OF s
),
deleted AS (
  DELETE FROM sessions AS s
   WHERE s.id = $1 AND s.id = ANY(ARRAY(SELECT locked.id FROM locked))
  RETURNING s.lease_token
),
-- Session budgets name their session by id, without a foreign key (the other scopes name none):
-- they go with the tree, so a session created again under an id does not inherit an old cap.
budgets_gone AS (
  DELETE FROM budgets AS b
   WHERE b.scope = 'session' AND b.session_id = ANY(ARRAY(SELECT locked.id FROM locked)) AND EXISTS (SELECT 1 FROM deleted)
)
SELECT (SELECT lease_token FROM deleted) AS "leaseToken",
       CASE WHEN EXISTS (SELECT 1 FROM deleted)
            THEN coalesce((SELECT jsonb_agg(jsonb_build_object('sessionId', locked.id, 'leaseToken', locked.lease_token) ORDER BY locked.id COLLATE "C")
                             FROM locked WHERE locked.id <> $1), '[]'::jsonb)
            ELSE '[]'::jsonb END AS descendants`;
