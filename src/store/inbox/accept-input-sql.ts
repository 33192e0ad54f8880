import type { BatchStatement } from '../batching/row-batcher.js';
import { DEFAULT_SESSION_AGENT } from '../../fleet/agent-name.js';
import { DEFAULT_TENANT } from '../../fleet/tenant-name.js';
import { agentServedSql } from '../agents/agent-served-sql.js';

/**
 * Accepts inputs in one autocommit statement (I2, R5 in docs/invariants.md): one row per input, each
 * of a different session, so concurrent accepts of different sessions share a statement
 * (`../batching/row-batcher.ts`).
 *
 * `locked` creates each session when missing (its first input gets seq 1) or advances the existing
 * row's allocator. `ON CONFLICT DO UPDATE` always updates the latest committed version of the row and
 * holds its lock until the statement commits, so concurrent accepts of a session run one after
 * another and each reads the final `next_seq`: seqs are gapless and follow commit order. The input row
 * takes that seq; the foreign key to `sessions` is checked at the end of the statement, when the row
 * created in `locked` is visible.
 *
 * `accepted_at` is `clock_timestamp()`, evaluated per row that `locked` returns, hence after the lock
 * was taken; so it increases with seq (the statement start time would not: a statement may start
 * first and lock last).
 *
 * There is deliberately no `ON CONFLICT` on the input insert: a repeated input id fails the statement
 * on {@link INPUT_ID_UNIQUE_INDEX}, which also rolls back the allocator increment, so a duplicate uses
 * up no seq. The batcher then sends each input alone, and the caller of the duplicate reads the
 * original seq with {@link FIND_ACCEPTED_INPUT_SQL}.
 *
 * An input may name an agent (`agent`, null when it names none). It is refused, and nothing of it
 * written, when no live worker serves that agent (`served`: checked before the session is created) or
 * when its session runs on another one (the `WHERE` of the upsert, under the session's lock: the row
 * is locked but not advanced, and no input row follows). A session the statement creates takes the
 * named agent, or `default`. An input may name a tenant too (`tenant`, null when none): refused the
 * same way when its session belongs to another one; a session the statement creates takes the named
 * tenant, or `default`. A refusal for another tenant wins over one for another agent.
 *
 * An input names its queue (`queue`, null: any). A session the statement creates records it; one on
 * another queue refuses the input (`session.queue_mismatch`), so no queue's worker runs another's.
 *
 * Params: $1 a JSON array of `{ session_id, input_id, kind, mode, payload, origin_job_id, trace_context, agent, tenant, queue }`.
 * Returns per input `sessionId` with its `seq` and the session's `tenant`, or with `refused` (`agent.not_found`,
 * `session.queue_mismatch`, `session.tenant_mismatch` or `session.agent_mismatch`) and the session's agent as the statement
 * saw it (`sessionAgent`).
 */
export const ACCEPT_INPUTS: BatchStatement = {
  name: 'loopfleet_accept_inputs',
  text: `
WITH req AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS r(session_id text, input_id text, kind text, mode text, payload jsonb, origin_job_id text, trace_context jsonb, agent text, tenant text, queue text)
),
served AS (
  SELECT req.* FROM req WHERE req.agent IS NULL OR ${agentServedSql('req.agent')}
),
locked AS (
  -- In session id order, as every batched statement locks sessions (../fencing/lock-sessions-sql.ts).
  INSERT INTO sessions (id, agent, tenant, queue, next_seq)
  SELECT served.session_id, COALESCE(served.agent, '${DEFAULT_SESSION_AGENT}'), COALESCE(served.tenant, '${DEFAULT_TENANT}'), COALESCE(served.queue, ''), 1
    FROM served ORDER BY served.session_id COLLATE "C"
  ON CONFLICT (id) DO UPDATE SET next_seq = sessions.next_seq + 1, updated_at = now(),
    queue = CASE WHEN sessions.queue = '' THEN EXCLUDED.queue ELSE sessions.queue END
  -- Locked, yet neither advanced nor returned: the session runs on another queue or agent, or
  -- belongs to another tenant, than the one named.
   WHERE (EXCLUDED.queue = '' OR sessions.queue IN ('', EXCLUDED.queue)) AND NOT EXISTS (
     SELECT 1 FROM req WHERE req.session_id = EXCLUDED.id
        AND ((req.agent IS NOT NULL AND req.agent <> sessions.agent) OR (req.tenant IS NOT NULL AND req.tenant <> sessions.tenant)))
  RETURNING id, next_seq, tenant
),
inserted AS (
  INSERT INTO session_inputs (session_id, seq, input_id, kind, mode, payload, origin_job_id, trace_context, accepted_at)
  SELECT locked.id, locked.next_seq, req.input_id, req.kind, req.mode, req.payload, req.origin_job_id, req.trace_context, clock_timestamp()
    FROM locked
    JOIN req ON req.session_id = locked.id
  RETURNING session_id, seq
)
SELECT inserted.session_id AS "sessionId", inserted.seq, NULL AS refused, NULL AS "sessionAgent", NULL AS "sessionQueue", locked.tenant
  FROM inserted JOIN locked ON locked.id = inserted.session_id
UNION ALL
SELECT req.session_id, NULL,
       CASE WHEN req.queue IS NOT NULL AND current.queue NOT IN ('', req.queue) THEN 'session.queue_mismatch'
            WHEN served.session_id IS NULL THEN 'agent.not_found'
            -- The row may be invisible to this statement's snapshot (created meanwhile): an input
            -- naming a tenant is then refused for it.
            WHEN req.tenant IS NOT NULL AND (req.agent IS NULL OR current.tenant IS DISTINCT FROM req.tenant) THEN 'session.tenant_mismatch'
            ELSE 'session.agent_mismatch' END,
       current.agent, current.queue, NULL
  FROM req LEFT JOIN served ON served.session_id = req.session_id
  LEFT JOIN sessions AS current ON current.id = req.session_id
 WHERE NOT EXISTS (SELECT 1 FROM locked WHERE locked.id = req.session_id)`,
};

/** The unique index on `session_inputs (session_id, input_id)` that a repeated input id violates. */
export const INPUT_ID_UNIQUE_INDEX = 'session_inputs_input_id_uq';

/** An input already accepted under this id. Params: $1 session id, $2 input id. */
export const FIND_ACCEPTED_INPUT_SQL = `
SELECT i.seq, s.tenant FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE i.session_id = $1 AND i.input_id = $2`;
