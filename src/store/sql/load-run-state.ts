import { LOAD_OPEN_TOOL_CALLS_SQL } from './load-open-tool-calls.js';
import { LOAD_WINDOW_SQL } from './load-window.js';

/** The `usage_rounds` columns, named as `UsageRoundRecord` fields. */
const USAGE_ROUND_COLUMNS = `session_id AS "sessionId", input_seq AS "inputSeq", round, provider, model,
  llm_calls AS "llmCalls", prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens",
  cached_tokens AS "cachedTokens", reasoning_tokens AS "reasoningTokens", total_tokens AS "totalTokens",
  created_at AS "createdAt"`;

/**
 * The three reads a run starts from — the active window, the input's usage rows, the open ledger
 * rows — as one multi-statement simple query: one round trip, three results, each statement the same
 * text as its stand-alone read (and so the same index: `messages_active_idx`, the usage primary key,
 * `tool_calls_open_idx`). The simple protocol takes no parameters, so the values are inlined:
 * `sessionLiteral` must be an id that passed `assertSessionId` (`[A-Za-z0-9_.:-]` only) quoted with
 * `escapeLiteral`, and `inputSeq` a validated integer.
 */
export function loadRunStateSql(sessionLiteral: string, inputSeq: number): string {
  const bind = (sql: string) => sql.replaceAll('$1', sessionLiteral);
  return [
    bind(LOAD_WINDOW_SQL),
    `SELECT ${USAGE_ROUND_COLUMNS} FROM usage_rounds WHERE session_id = ${sessionLiteral} AND input_seq = ${inputSeq} ORDER BY round`,
    bind(LOAD_OPEN_TOOL_CALLS_SQL),
  ].join(';\n');
}
