/**
 * A session's direct children in spawn order (`sessions_parent_idx`), each with its state: the
 * status of the result delivered to the parent (the parent's `child:<toolCallId>` row, by
 * `session_inputs_input_id_uq`) when there is one; else its first input's outcome once it ended (a
 * result not delivered: the parent input had ended); else the child session's status, `idle` read
 * as `pending` (accepted, not yet run).
 * Params: $1 parent id.
 */
export const LIST_CHILDREN_SQL = `
SELECT c.id AS "sessionId", c.agent, c.spawn_input_seq AS "inputSeq", c.spawn_tool_call_id AS "toolCallId",
       c.spawn_wait AS wait, c.depth,
       coalesce(
         delivered.payload ->> 'status',
         CASE WHEN task.status IN ('done', 'failed', 'cancelled')
              THEN coalesce(task.result ->> 'status', CASE task.status WHEN 'done' THEN 'completed' ELSE task.status END) END,
         CASE c.status WHEN 'idle' THEN 'pending' ELSE c.status END
       ) AS status,
       c.created_at AS "createdAt"
  FROM sessions AS c
  LEFT JOIN session_inputs AS delivered
    ON delivered.session_id = c.parent_session_id AND delivered.input_id = 'child:' || c.spawn_tool_call_id
  LEFT JOIN session_inputs AS task
    ON task.session_id = c.id AND task.seq = 1
 WHERE c.parent_session_id = $1
 ORDER BY c.created_at, c.id COLLATE "C"`;
