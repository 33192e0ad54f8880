/**
 * Ends a running input and adds its run to the session's cumulative stats, in one statement. The
 * stats update joins the input update, so it happens only when the input really moved from
 * `running`: finishing twice matches nothing the second time and cannot count twice.
 *
 * The inputs steered into it finish with it (DESIGN.md I6): they get its result with `steeredInto`
 * added (`jsonb ||`, so a null result stays null), its error code and message, and its finish time.
 * They stay `done` and add nothing to the stats (their run is this one).
 *
 * `finished_at` is clock time, so it never precedes `accepted_at` or `started_at`; the session's
 * first/last input times are the same instant.
 * Params: $1 session id, $2 seq, $3 status, $4 result (jsonb text or null), $5 error code,
 * $6 error message, $7 session status, $8 rounds, $9 llm calls, $10 tool calls, $11 prompt tokens,
 * $12 completion tokens, $13 cached tokens, $14 reasoning tokens, $15 total tokens.
 */
export const FINISH_INPUT_SQL = `
WITH finished AS (
  UPDATE session_inputs
     SET status = $3, result = $4::jsonb, error_code = $5, error_message = $6, finished_at = clock_timestamp()
   WHERE session_id = $1 AND seq = $2 AND status = 'running'
  RETURNING seq, finished_at
),
steered AS (
  UPDATE session_inputs AS s
     SET result = $4::jsonb || jsonb_build_object('steeredInto', finished.seq),
         error_code = $5,
         error_message = $6,
         finished_at = finished.finished_at
    FROM finished
   WHERE s.session_id = $1 AND s.steered_into = finished.seq
)
UPDATE sessions
   -- A question still waiting (a send refused while it waits) keeps the session waiting.
   SET status = CASE WHEN jsonb_array_length(coalesce(sessions.pending -> 'interactions', '[]'::jsonb)) > 0
                     THEN 'waiting_for_input' ELSE $7 END,
       stat_inputs = stat_inputs + 1,
       stat_rounds = stat_rounds + $8::bigint,
       stat_llm_calls = stat_llm_calls + $9::bigint,
       stat_tool_calls = stat_tool_calls + $10::bigint,
       stat_prompt_tokens = stat_prompt_tokens + $11::bigint,
       stat_completion_tokens = stat_completion_tokens + $12::bigint,
       stat_cached_tokens = stat_cached_tokens + $13::bigint,
       stat_reasoning_tokens = stat_reasoning_tokens + $14::bigint,
       stat_total_tokens = stat_total_tokens + $15::bigint,
       first_input_at = coalesce(first_input_at, finished.finished_at),
       last_input_at = finished.finished_at,
       updated_at = now()
  FROM finished
 WHERE sessions.id = $1
RETURNING finished.seq`;
