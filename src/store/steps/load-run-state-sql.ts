import { MESSAGE_COLUMNS } from '../rows/message-row.js';
import { TOOL_CALL_COLUMNS } from '../rows/tool-call-row.js';
import { OPEN_TOOL_CALLS } from './load-open-tool-calls-sql.js';
import { ACTIVE_MESSAGES } from './load-window-sql.js';

/** The `usage_rounds` columns, named as `UsageRoundRecord` fields. */
const USAGE_ROUND_COLUMNS = `session_id AS "sessionId", input_seq AS "inputSeq", round, provider, model,
  llm_calls AS "llmCalls", prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens",
  cached_tokens AS "cachedTokens", cache_write_tokens AS "cacheWriteTokens", reasoning_tokens AS "reasoningTokens", total_tokens AS "totalTokens",
  cost_picousd AS "costPicoUsd", created_at AS "createdAt"`;

/** One run's start: its session, as a quoted literal, and its input's seq. */
export interface RunStateKey {
  /** An id that passed `assertSessionId` (`[A-Za-z0-9_.:-]` only), quoted with `escapeLiteral`. */
  sessionLiteral: string;
  /** A validated integer. */
  inputSeq: number;
  /**
   * The session's window as the worker already holds it (its window cache), or null: its epoch and the
   * highest seq it holds. While the session's `window_epoch` is still this one, only the active rows
   * above `throughSeq` are read; otherwise, and without it, the whole window.
   */
  cached: { windowEpoch: number; throughSeq: number } | null;
}

/**
 * The three reads runs start from — the active windows, the inputs' usage rows, the open ledger rows —
 * for any number of sessions, as three simple-protocol statements (the batched reads take no
 * parameters, so the validated values are inlined). Each keeps its stand-alone read's predicate, and
 * so its index: `messages_active_idx` (session_id, seq) WHERE state = 'active', the usage primary
 * key, `tool_calls_open_idx`; every row names its session in `sessionId`, and each session's rows
 * come in the stand-alone read's order.
 *
 * The window statement also returns each session's `window_epoch` (as `windowEpoch`) in the same
 * snapshot as its rows: one row per active message read, or a single row with null message columns
 * when there is none to read (no row at all: no such session). A session whose key carries a cached
 * epoch that is still current gets only its rows above the cached seq. `OFFSET 0` keeps the planner
 * from flattening the per-session subquery into one join over every message of the listed sessions
 * (it chose a hash join over a scan of the whole table, folded rows included): each session is one
 * range of the partial index.
 */
export function loadRunStateSql(keys: readonly RunStateKey[]): string {
  const sessions = keys.map((key) => key.sessionLiteral).join(', ');
  const inputs = keys.map((key) => `(${key.sessionLiteral}, ${key.inputSeq})`).join(', ');
  const windows = keys
    .map((key) => `(${key.sessionLiteral}, ${key.cached === null ? 'NULL' : key.cached.windowEpoch}::bigint, ${key.cached === null ? 0 : key.cached.throughSeq}::bigint)`)
    .join(', ');
  return [
    `SELECT k.session_id AS "sessionId", s.window_epoch AS "windowEpoch", m.*
  FROM (VALUES ${windows}) AS k(session_id, cached_epoch, cached_through)
  JOIN sessions AS s ON s.id = k.session_id
  LEFT JOIN LATERAL (
    SELECT ${MESSAGE_COLUMNS}
      FROM messages
     WHERE session_id = k.session_id AND ${ACTIVE_MESSAGES}
       AND seq > CASE WHEN s.window_epoch = k.cached_epoch THEN k.cached_through ELSE 0 END
    OFFSET 0
  ) AS m ON true
 ORDER BY k.session_id, m.seq`,
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
