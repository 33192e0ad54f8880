/**
 * One step of a run as ONE autocommit statement (DESIGN.md I3, §9): a chain of data-modifying CTEs
 * instead of BEGIN, six statements and COMMIT. A statement is atomic, so the step is all-or-nothing
 * without a transaction block, and it costs one round trip.
 *
 * **The fence.** `fence` is the only write to the `sessions` row — a statement must not update a row
 * twice (PostgreSQL would silently apply one of the updates) — so it carries the message-seq
 * allocation, the pending state and, when the step finishes an input, the session's end of run
 * (status, stats, first/last input time). It matches only while `$2` is the current token AND every
 * precondition of the step holds:
 * - compaction: every folded seq is an active message, or one this step appends;
 * - steering: the host input is `running` and every steered input `pending`;
 * - finishing: the input is `running`.
 * Every other CTE joins `fence`, so when it matches nothing the statement writes nothing; the client
 * then tells `lease.lost` from `state.conflict` by reading {@link STEP_REFUSAL_SQL}.
 *
 * **Why the preconditions may read the statement's snapshot.** The subqueries see the snapshot taken
 * when the statement began, not the latest committed rows; only the `sessions` row itself is
 * re-checked on its latest version (UPDATE waits for a concurrent writer of the row and re-evaluates
 * its WHERE on the new version). That is enough for every row the preconditions read — input
 * statuses, message states, steering — because each changes only under the fence, by the lease
 * holder: producers only INSERT inputs (as `pending`); claim, steer, finish and fold are fenced
 * writes. Whoever changed such a row after our snapshot committed under another token, which the
 * re-check of `lease_token` refuses; with our token current, the holder is this caller, whose
 * previous step has committed. So a stale snapshot never admits a step wrongly. What it can miss is
 * an input INSERTed after it, which only makes a check fail: a step steering an input accepted after
 * the statement began is refused. The client then waits for the row and tries once more
 * (`commitStep`), so such a step is applied as a transaction reading after its fence's lock wait
 * would apply it.
 *
 * **Order within the statement.** Sub-statements of one statement all see the same snapshot and not
 * each other's writes, so the step is written as if its parts ran in the old order: messages this
 * step folds are inserted `compacted` (the fold's UPDATE cannot see them); inputs steered into the
 * input this step finishes get its result on delivery (the finish's UPDATE of steered inputs cannot
 * see them); every time stamp is one clock reading, `step.at`, taken after the snapshot, so it never
 * precedes the `accepted_at` or `started_at` of a row the step touches.
 *
 * Returns one row — the last message seq before the step (the n-th message got `baseSeq + n`) and
 * `pendingInputs` — or none when refused. `pendingInputs` is true when an input is `pending` as the
 * step commits: in the snapshot (less the ones this step steers; the predicate implies that of
 * `session_inputs_open_idx`, so only open inputs are read) or accepted after it, which moved the
 * locked row's `next_seq` past the snapshot's (an accept bumps it under the same row lock, and
 * nobody but this holder could have claimed the input since).
 *
 * Params: $1 session id, $2 lease token, $3 messages (jsonb array of `MessageColumns`), $4 whether to
 * set the pending state, $5 pending state (jsonb, null clears), $6 tool-call writes (jsonb array, at
 * most one per id), $7 usage rounds (jsonb array, one per key), $8 fold seqs (bigint[], null without
 * compaction), $9 compaction record (jsonb: `noteSeq` or `noteOrdinal` — the 1-based place of the
 * note among $3 — `inputSeq`, `fromSeq`, `toSeq`, `estimatedTokensBefore`, `estimatedTokensAfter`,
 * `model`; null without compaction), $10 steered seqs (bigint[], empty without steering), $11 their
 * host's seq (null without steering), $12 seq of the input the step finishes (null if none), $13 its
 * status, $14 its result (jsonb, null if none — always null when $12 is), $15 error code, $16 error
 * message.
 */
export const COMMIT_STEP_SQL = `
WITH step AS (
  -- The run a finishing step adds to the session's stats: counts from the stored result itself.
  SELECT clock_timestamp() AS at,
         jsonb_array_length($3::jsonb) AS message_count,
         CASE WHEN $12::bigint IS NULL THEN 0 ELSE 1 END AS inputs,
         coalesce(($14::jsonb ->> 'rounds')::bigint, 0) AS rounds,
         coalesce(($14::jsonb ->> 'toolCalls')::bigint, 0) AS tool_calls,
         coalesce(($14::jsonb #>> '{usage,llmCalls}')::bigint, 0) AS llm_calls,
         coalesce(($14::jsonb #>> '{usage,promptTokens}')::bigint, 0) AS prompt_tokens,
         coalesce(($14::jsonb #>> '{usage,completionTokens}')::bigint, 0) AS completion_tokens,
         coalesce(($14::jsonb #>> '{usage,cachedTokens}')::bigint, 0) AS cached_tokens,
         coalesce(($14::jsonb #>> '{usage,reasoningTokens}')::bigint, 0) AS reasoning_tokens,
         coalesce(($14::jsonb #>> '{usage,totalTokens}')::bigint, 0) AS total_tokens
),
fence AS (
  UPDATE sessions AS s
     SET next_message_seq = s.next_message_seq + step.message_count,
         pending = CASE WHEN $4::boolean THEN $5::jsonb ELSE s.pending END,
         status = CASE
                    WHEN $12::bigint IS NULL THEN s.status
                    -- A question still waiting (a send refused while it waits) keeps the session waiting.
                    WHEN jsonb_array_length(coalesce(CASE WHEN $4::boolean THEN $5::jsonb ELSE s.pending END -> 'interactions', '[]'::jsonb)) > 0
                      OR $14::jsonb ->> 'status' = 'waiting_for_input' THEN 'waiting_for_input'
                    ELSE 'idle'
                  END,
         stat_inputs = s.stat_inputs + step.inputs,
         stat_rounds = s.stat_rounds + step.rounds,
         stat_llm_calls = s.stat_llm_calls + step.llm_calls,
         stat_tool_calls = s.stat_tool_calls + step.tool_calls,
         stat_prompt_tokens = s.stat_prompt_tokens + step.prompt_tokens,
         stat_completion_tokens = s.stat_completion_tokens + step.completion_tokens,
         stat_cached_tokens = s.stat_cached_tokens + step.cached_tokens,
         stat_reasoning_tokens = s.stat_reasoning_tokens + step.reasoning_tokens,
         stat_total_tokens = s.stat_total_tokens + step.total_tokens,
         first_input_at = CASE WHEN $12::bigint IS NULL THEN s.first_input_at ELSE coalesce(s.first_input_at, step.at) END,
         last_input_at = CASE WHEN $12::bigint IS NULL THEN s.last_input_at ELSE step.at END,
         updated_at = now()
    FROM step
   WHERE s.id = $1 AND s.lease_token = $2::bigint
     AND ($8::bigint[] IS NULL
          OR cardinality($8::bigint[]) =
               (SELECT count(*) FROM messages AS m
                 WHERE m.session_id = $1 AND m.seq = ANY($8::bigint[]) AND m.state = 'active')
             + (SELECT count(*) FROM unnest($8::bigint[]) AS f(seq)
                 WHERE f.seq > s.next_message_seq AND f.seq <= s.next_message_seq + step.message_count))
     AND ($11::bigint IS NULL
          OR (EXISTS (SELECT 1 FROM session_inputs AS h
                       WHERE h.session_id = $1 AND h.seq = $11::bigint AND h.status = 'running')
              AND cardinality($10::bigint[]) =
                    (SELECT count(*) FROM session_inputs AS p
                      WHERE p.session_id = $1 AND p.seq = ANY($10::bigint[]) AND p.status = 'pending')))
     AND ($12::bigint IS NULL
          OR EXISTS (SELECT 1 FROM session_inputs AS r
                      WHERE r.session_id = $1 AND r.seq = $12::bigint AND r.status = 'running'))
  RETURNING s.next_message_seq - step.message_count AS base_seq, s.next_seq, step.at
),
appended AS (
  INSERT INTO messages
    (session_id, seq, input_seq, round, role, kind, content, tool_calls, tool_call_id, name, is_error, state)
  SELECT $1, fence.base_seq + m.ord, m."inputSeq", m.round, m.role, m.kind, m.content, m."toolCalls",
         m."toolCallId", m.name, m."isError",
         CASE WHEN fence.base_seq + m.ord = ANY($8::bigint[]) THEN 'compacted' ELSE 'active' END
    FROM fence,
         ROWS FROM (
           jsonb_to_recordset($3::jsonb) AS ("inputSeq" bigint, round integer, role text, kind text,
             content jsonb, "toolCalls" jsonb, "toolCallId" text, name text, "isError" boolean)
         ) WITH ORDINALITY AS m("inputSeq", round, role, kind, content, "toolCalls", "toolCallId", name, "isError", ord)
),
-- Compaction: folded messages stay for audit, never sent to a model again. All of $8 are folded
-- (the fence checked it), so that is the count recorded.
folded AS (
  UPDATE messages AS m SET state = 'compacted'
    FROM fence
   WHERE m.session_id = $1 AND m.seq = ANY($8::bigint[]) AND m.state = 'active'
),
compacted AS (
  INSERT INTO compactions
    (session_id, note_seq, input_seq, from_seq, to_seq, folded_messages, estimated_tokens_before,
     estimated_tokens_after, model)
  SELECT $1, coalesce(c."noteSeq", fence.base_seq + c."noteOrdinal"), c."inputSeq", c."fromSeq", c."toSeq",
         cardinality($8::bigint[]), c."estimatedTokensBefore", c."estimatedTokensAfter", c.model
    FROM fence,
         jsonb_to_record($9::jsonb) AS c("noteSeq" bigint, "noteOrdinal" bigint, "inputSeq" bigint, "fromSeq" bigint,
           "toSeq" bigint, "estimatedTokensBefore" integer, "estimatedTokensAfter" integer, model text)
   WHERE $9::jsonb IS NOT NULL
),
-- The tool ledger, keyed by (session, tool call id): writing \`started\` again counts another attempt
-- and restarts the clock; a final status stamps \`finished_at\`. The idempotency key is
-- \`<sessionId>:<toolCallId>\` (DESIGN.md I5).
ledger AS (
  INSERT INTO tool_calls AS t
    (session_id, tool_call_id, input_seq, round, name, args, status, attempts, idempotency_key,
     error_code, started_at, finished_at, duration_ms)
  SELECT $1, w."toolCallId", w."inputSeq", w.round, w.name, w.args, w.status,
         CASE WHEN w.status = 'started' THEN 1 ELSE 0 END,
         $1 || ':' || w."toolCallId",
         w."errorCode", now(),
         CASE WHEN w.status IN ('completed', 'failed', 'aborted') THEN now() END,
         w."durationMs"
    FROM fence,
         jsonb_to_recordset($6::jsonb) AS w("toolCallId" text, "inputSeq" bigint, round integer, name text,
           args jsonb, status text, "errorCode" text, "durationMs" integer)
  ON CONFLICT (session_id, tool_call_id) DO UPDATE SET
    input_seq = excluded.input_seq,
    round = excluded.round,
    name = excluded.name,
    args = excluded.args,
    status = excluded.status,
    attempts = t.attempts + CASE WHEN excluded.status = 'started' THEN 1 ELSE 0 END,
    started_at = CASE WHEN excluded.status = 'started' THEN excluded.started_at ELSE t.started_at END,
    finished_at = excluded.finished_at,
    error_code = excluded.error_code,
    duration_ms = excluded.duration_ms
),
-- Usage per (session, input, round): a round re-run after a crash replaces its row, not adds to it.
usage AS (
  INSERT INTO usage_rounds
    (session_id, input_seq, round, provider, model, llm_calls, prompt_tokens, completion_tokens,
     cached_tokens, reasoning_tokens, total_tokens)
  SELECT $1, u."inputSeq", u.round, u.provider, u.model, u."llmCalls", u."promptTokens",
         u."completionTokens", u."cachedTokens", u."reasoningTokens", u."totalTokens"
    FROM fence,
         jsonb_to_recordset($7::jsonb) AS u("inputSeq" bigint, round integer, provider text, model text,
           "llmCalls" integer, "promptTokens" integer, "completionTokens" integer, "cachedTokens" integer,
           "reasoningTokens" integer, "totalTokens" integer)
  ON CONFLICT (session_id, input_seq, round) DO UPDATE SET
    provider = excluded.provider,
    model = excluded.model,
    llm_calls = excluded.llm_calls,
    prompt_tokens = excluded.prompt_tokens,
    completion_tokens = excluded.completion_tokens,
    cached_tokens = excluded.cached_tokens,
    reasoning_tokens = excluded.reasoning_tokens,
    total_tokens = excluded.total_tokens,
    created_at = now()
),
-- Steering (DESIGN.md §4.4): pending inputs delivered into the running host are \`done\` from now on,
-- naming it. They get its result when it finishes — right here when this step finishes it.
delivered AS (
  UPDATE session_inputs AS i
     SET status = 'done',
         steered_into = $11::bigint,
         attempts = i.attempts + 1,
         started_at = coalesce(i.started_at, fence.at),
         finished_at = fence.at,
         result = CASE WHEN $11::bigint = $12::bigint
                       THEN $14::jsonb || jsonb_build_object('steeredInto', $11::bigint) ELSE i.result END,
         error_code = CASE WHEN $11::bigint = $12::bigint THEN $15::text ELSE i.error_code END,
         error_message = CASE WHEN $11::bigint = $12::bigint THEN $16::text ELSE i.error_message END
    FROM fence
   WHERE i.session_id = $1 AND i.seq = ANY($10::bigint[]) AND i.status = 'pending'
),
-- The end of the input (DESIGN.md I6); the session's side of it is in the fence.
finished AS (
  UPDATE session_inputs AS i
     SET status = $13::text, result = $14::jsonb, error_code = $15::text, error_message = $16::text,
         finished_at = fence.at
    FROM fence
   WHERE i.session_id = $1 AND i.seq = $12::bigint AND i.status = 'running'
),
-- Inputs steered into it by earlier steps finish with it: its result plus \`steeredInto\` (\`||\` keeps a
-- null result null), its error, its finish time. They add nothing to the stats: their run is this one.
joined AS (
  UPDATE session_inputs AS i
     SET result = $14::jsonb || jsonb_build_object('steeredInto', $12::bigint),
         error_code = $15::text,
         error_message = $16::text,
         finished_at = fence.at
    FROM fence
   WHERE i.session_id = $1 AND i.steered_into = $12::bigint
)
SELECT fence.base_seq AS "baseSeq",
       EXISTS (SELECT 1 FROM session_inputs AS o
                WHERE o.session_id = $1 AND o.status IN ('pending', 'running') AND o.status = 'pending'
                  AND o.seq <> ALL($10::bigint[]))
       OR fence.next_seq > (SELECT seen.next_seq FROM sessions AS seen WHERE seen.id = $1) AS "pendingInputs"
  FROM fence`;

/**
 * Why a step was refused, read after {@link COMMIT_STEP_SQL} matched nothing on its retry (the
 * failure path only). Tokens are never reused and the rows read change only under the current token,
 * so when `$2` is still current this shows the state the step was refused on. No row: the session is
 * gone.
 * Params: $1 session id, $2 lease token, $3 message count of the step, $4 fold seqs (bigint[], empty
 * if none), $5 steering host seq (or null), $6 steered seqs (bigint[], empty if none), $7 seq of the
 * input to finish (or null).
 */
export const STEP_REFUSAL_SQL = `
SELECT s.lease_token = $2::bigint AS "leaseHeld",
       (SELECT count(*) FROM messages AS m
         WHERE m.session_id = $1 AND m.seq = ANY($4::bigint[]) AND m.state = 'active')
     + (SELECT count(*) FROM unnest($4::bigint[]) AS f(seq)
         WHERE f.seq > s.next_message_seq AND f.seq <= s.next_message_seq + $3::bigint) AS "activeFolds",
       EXISTS (SELECT 1 FROM session_inputs AS h
                WHERE h.session_id = $1 AND h.seq = $5::bigint AND h.status = 'running') AS "hostRunning",
       (SELECT count(*) FROM session_inputs AS p
         WHERE p.session_id = $1 AND p.seq = ANY($6::bigint[]) AND p.status = 'pending') AS "pendingSteered",
       EXISTS (SELECT 1 FROM session_inputs AS r
                WHERE r.session_id = $1 AND r.seq = $7::bigint AND r.status = 'running') AS "finishRunning"
  FROM sessions AS s
 WHERE s.id = $1`;
