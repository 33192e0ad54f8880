/**
 * Appends a step's messages in one multi-row insert. They arrive as one JSON array (see
 * `MessageColumns`) so the statement is the same whatever their number; the n-th message gets seq
 * `base + n`. Params: $1 session id, $2 base seq, $3 messages (jsonb array text).
 */
export const APPEND_MESSAGES_SQL = `
INSERT INTO messages
  (session_id, seq, input_seq, round, role, kind, content, tool_calls, tool_call_id, name, is_error)
SELECT $1, $2::bigint + m.ord, m."inputSeq", m.round, m.role, m.kind, m.content, m."toolCalls",
       m."toolCallId", m.name, m."isError"
  FROM ROWS FROM (
         jsonb_to_recordset($3::jsonb) AS ("inputSeq" bigint, round integer, role text, kind text,
           content jsonb, "toolCalls" jsonb, "toolCallId" text, name text, "isError" boolean)
       ) WITH ORDINALITY AS m("inputSeq", round, role, kind, content, "toolCalls", "toolCallId", name, "isError", ord)`;
