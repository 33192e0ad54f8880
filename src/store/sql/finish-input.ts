/**
 * Ends a running input and adds its run to the session's cumulative stats, in one statement. The
 * stats update joins the input update, so it happens only when the input really moved from
 * `running`: finishing twice matches nothing the second time and cannot count twice.
 * Params: $1 session id, $2 seq, $3 status, $4 result (jsonb text or null), $5 error code,
 * $6 error message, $7 session status, $8 rounds, $9 llm calls, $10 tool calls, $11 prompt tokens,
 * $12 completion tokens, $13 cached tokens, $14 reasoning tokens, $15 total tokens.
 */
export const FINISH_INPUT_SQL = `
WITH finished AS (
  UPDATE session_inputs
     SET status = $3, result = $4::jsonb, error_code = $5, error_message = $6, finished_at = now()
   WHERE session_id = $1 AND seq = $2 AND status = 'running'
  RETURNING seq
)
UPDATE sessions
   SET status = $7,
       stat_inputs = stat_inputs + 1,
       stat_rounds = stat_rounds + $8::bigint,
       stat_llm_calls = stat_llm_calls + $9::bigint,
       stat_tool_calls = stat_tool_calls + $10::bigint,
       stat_prompt_tokens = stat_prompt_tokens + $11::bigint,
       stat_completion_tokens = stat_completion_tokens + $12::bigint,
       stat_cached_tokens = stat_cached_tokens + $13::bigint,
       stat_reasoning_tokens = stat_reasoning_tokens + $14::bigint,
       stat_total_tokens = stat_total_tokens + $15::bigint,
       first_input_at = coalesce(first_input_at, now()),
       last_input_at = now(),
       updated_at = now()
  FROM finished
 WHERE sessions.id = $1
RETURNING finished.seq`;
