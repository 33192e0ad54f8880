/**
 * The fleet's backlog: every input accepted and not started, and of those the ones a worker could
 * start now — the first open input of its session, with nothing running (or waiting for child
 * sessions) before it (a session's inputs run one at a time, in seq order, so the others wait for
 * their session, not for a worker) — with how
 * long the oldest of these has waited, by Postgres's clock. Reads `session_inputs_pending_age_idx`
 * (pending inputs) and, per pending input, `session_inputs_open_idx` (open inputs by session and seq),
 * so it costs the backlog's size, never the table's. `::int`: a backlog past 2^31 is not one to count.
 * Only inputs of sessions of the reading worker's queue, and of sessions from before queues were
 * recorded (`''`): several queues on one database each see their own backlog. $1 queue (null: every queue's).
 */
export const READ_BACKLOG_SQL = `SELECT count(*)::int AS pending,
       count(*) FILTER (WHERE startable)::int AS sessions_waiting,
       COALESCE(EXTRACT(EPOCH FROM now() - min(accepted_at) FILTER (WHERE startable)), 0)::float8 AS oldest_wait_seconds
  FROM (SELECT p.accepted_at,
               NOT EXISTS (SELECT 1 FROM session_inputs o
                            WHERE o.session_id = p.session_id AND o.seq < p.seq AND o.status IN ('pending', 'running', 'waiting')) AS startable
          FROM session_inputs p
         WHERE p.status = 'pending'
           AND ($1::text IS NULL OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = p.session_id AND s.queue IN ($1, '')))) AS waiting`;
