/**
 * Writes per-round usage. Keyed by (session, input, round): a round re-run after a crash replaces its
 * row instead of counting twice. Params: $1 session id, $2 rows (jsonb array text, one per key).
 */
export const UPSERT_USAGE_ROUNDS_SQL = `
INSERT INTO usage_rounds
  (session_id, input_seq, round, provider, model, llm_calls, prompt_tokens, completion_tokens,
   cached_tokens, reasoning_tokens, total_tokens)
SELECT $1, u."inputSeq", u.round, u.provider, u.model, u."llmCalls", u."promptTokens",
       u."completionTokens", u."cachedTokens", u."reasoningTokens", u."totalTokens"
  FROM jsonb_to_recordset($2::jsonb) AS u("inputSeq" bigint, round integer, provider text, model text,
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
  created_at = now()`;
