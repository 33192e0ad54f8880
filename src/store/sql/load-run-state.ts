import { MESSAGE_COLUMNS } from '../rows/message-row.js';
import { TOOL_CALL_COLUMNS } from '../rows/tool-call-row.js';
import { OPEN_TOOL_CALLS } from './load-open-tool-calls.js';
import { ACTIVE_MESSAGES } from './load-window.js';

/** The `usage_rounds` columns, named as `UsageRoundRecord` fields. */
const USAGE_ROUND_COLUMNS = `session_id AS "sessionId", input_seq AS "inputSeq", round, provider, model,
  llm_calls AS "llmCalls", prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens",
  cached_tokens AS "cachedTokens", reasoning_tokens AS "reasoningTokens", total_tokens AS "totalTokens",
  created_at AS "createdAt"`;

/** One run's start: its session, as a quoted literal, and its input's seq. */
export interface RunStateKey {
  /** An id that passed `assertSessionId` (`[A-Za-z0-9_.:-]` only), quoted with `escapeLiteral`. */
  sessionLiteral: string;
  /** A validated integer. */
  inputSeq: number;
}

/**
 * The three reads runs start from — the active windows, the inputs' usage rows, the open ledger rows —
 * for any number of sessions, as three simple-protocol statements (the batched reads take no
 * parameters, so the validated values are inlined). Each keeps its stand-alone read's predicate, and
 * so its index: `messages_active_idx` (session_id, seq) WHERE state = 'active', the usage primary
 * key, `tool_calls_open_idx`; every row names its session in `sessionId`, and each session's rows
 * come in the stand-alone read's order.
 */
export function loadRunStateSql(keys: readonly RunStateKey[]): string {
  const sessions = keys.map((key) => key.sessionLiteral).join(', ');
  const inputs = keys.map((key) => `(${key.sessionLiteral}, ${key.inputSeq})`).join(', ');
  return [
    `SELECT session_id AS "sessionId", ${MESSAGE_COLUMNS}
  FROM messages
 WHERE session_id IN (${sessions}) AND ${ACTIVE_MESSAGES}
 ORDER BY session_id, seq`,
    `SELECT ${USAGE_ROUND_COLUMNS}
  FROM usage_rounds
 WHERE (session_id, input_seq) IN (${inputs})
 ORDER BY session_id, input_seq, round`,
    `SELECT ${TOOL_CALL_COLUMNS}
  FROM tool_calls
 WHERE session_id IN (${sessions}) AND ${OPEN_TOOL_CALLS}
 ORDER BY session_id, started_at, tool_call_id`,
  ].join(';\n');
}
