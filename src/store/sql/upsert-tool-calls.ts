/**
 * Records tool-ledger transitions, keyed by (session, tool call id). Writing `started` again counts
 * another attempt and restarts the clock; a final status (`completed`, `failed`, `aborted`) stamps
 * `finished_at`. The idempotency key is `<sessionId>:<toolCallId>` (DESIGN.md I5).
 * Params: $1 session id, $2 writes (jsonb array text, at most one per tool call id).
 */
export const UPSERT_TOOL_CALLS_SQL = `
INSERT INTO tool_calls AS t
  (session_id, tool_call_id, input_seq, round, name, args, status, attempts, idempotency_key,
   error_code, started_at, finished_at, duration_ms)
SELECT $1, w."toolCallId", w."inputSeq", w.round, w.name, w.args, w.status,
       CASE WHEN w.status = 'started' THEN 1 ELSE 0 END,
       $1 || ':' || w."toolCallId",
       w."errorCode", now(),
       CASE WHEN w.status IN ('completed', 'failed', 'aborted') THEN now() END,
       w."durationMs"
  FROM jsonb_to_recordset($2::jsonb) AS w("toolCallId" text, "inputSeq" bigint, round integer, name text,
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
  duration_ms = excluded.duration_ms`;
