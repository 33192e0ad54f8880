/**
 * The pieces `commitStepStatement` (./commit-step-sql.ts) assembles a step statement from: one function
 * or constant per part — its CTEs, its precondition in the fence's WHERE, its assignments in the
 * fence's SET. Each step of the batch is one row: inside the fence its values are `step.<field>`,
 * after it `fence.<field>` (the fence returns them for the sessions it matched, so a CTE joining
 * `fence` writes only for those). Read that file's doc comment for the fencing and snapshot argument
 * they rely on.
 */
import type { StepParts } from './step-parts.js';
import { lockedSession, lockSessionsCte } from '../fencing/lock-sessions-sql.js';

/** What the fence reads besides the row: the message count, the clock, and a finish's stats. */
export function stepColumns(parts: StepParts): string[] {
  return [
    parts.messages && 'jsonb_array_length(b.messages) AS message_count',
    (parts.steer || parts.finish) && 'clock_timestamp() AS at',
    // The run a finishing step adds to the session's stats: counts from the stored result itself.
    ...(parts.finish ? FINISH_STATS.map(([column, path]) => `coalesce((b.result ${path})::bigint, 0) AS stat_${column}`) : []),
  ].filter((column): column is string => typeof column === 'string');
}

/** Session stats a finished run adds, and where its result holds them. */
const FINISH_STATS = [
  ['rounds', "->> 'rounds'"],
  ['tool_calls', "->> 'toolCalls'"],
  ['llm_calls', "#>> '{usage,llmCalls}'"],
  ['prompt_tokens', "#>> '{usage,promptTokens}'"],
  ['completion_tokens', "#>> '{usage,completionTokens}'"],
  ['cached_tokens', "#>> '{usage,cachedTokens}'"],
  ['cache_write_tokens', "#>> '{usage,cacheWriteTokens}'"],
  ['reasoning_tokens', "#>> '{usage,reasoningTokens}'"],
  ['total_tokens', "#>> '{usage,totalTokens}'"],
  // Exact picodollars of the run's own calls (0 in a result written before costs were recorded).
  ['cost_picousd', "#>> '{usage,costPicoUsd}'"],
] as const;

/** The session's tenant and agent, which its usage rows copy (usage reports read those rows alone). */
const USAGE_OWNER = ', s.tenant AS usage_tenant, s.agent AS usage_agent';

export function fenceCte(parts: StepParts): string {
  const pending = parts.pending ? 'step.pending' : 's.pending';
  const sets = [
    parts.messages && 'next_message_seq = s.next_message_seq + step.message_count',
    parts.pending && `pending = ${pending}`,
    // Rows leave the active window: a new epoch, so no cached copy of it is reused (docs/store.md).
    parts.compaction && "window_epoch = nextval('window_epoch_seq')",
    ...(parts.finish
      ? [
          `status = CASE
                    -- A question still waiting (a send refused while it waits) keeps the session waiting.
                    WHEN jsonb_array_length(coalesce(${pending} -> 'interactions', '[]'::jsonb)) > 0
                      OR step.result ->> 'status' = 'waiting_for_input' THEN 'waiting_for_input'
                    ELSE 'idle'
                  END`,
          'stat_inputs = s.stat_inputs + 1',
          ...FINISH_STATS.map(([column]) => `stat_${column} = s.stat_${column} + step.stat_${column}`),
          'first_input_at = coalesce(s.first_input_at, step.at)',
          'last_input_at = step.at',
          // Its input_finished is owed until a release says it was published.
          'finishes_owed = true',
        ]
      : []),
    'updated_at = now()',
  ].filter((set): set is string => typeof set === 'string');
  const preconditions = [
    parts.compaction && foldPrecondition(parts),
    parts.steer && STEER_PRECONDITION,
    parts.finish && FINISH_PRECONDITION,
  ].filter((condition): condition is string => typeof condition === 'string');
  const baseSeq = parts.messages ? 's.next_message_seq - step.message_count' : 's.next_message_seq';
  return `${lockSessionsCte('step', 'locking.lease_token = step.lease_token')},
fence AS (
  UPDATE sessions AS s
     SET ${sets.join(',\n         ')}
    FROM step
   WHERE s.id = step.session_id AND ${lockedSession('s')} AND s.lease_token = step.lease_token${preconditions.map((c) => `\n     AND ${c}`).join('')}
  RETURNING ${baseSeq} AS base_seq, s.next_seq${parts.usage ? USAGE_OWNER : ''}, step.*
)`;
}

/** Every folded seq is an active message, or (only if the step has messages) one it appends. */
function foldPrecondition(parts: StepParts): string {
  const appended = `
             + (SELECT count(*) FROM unnest(step.fold_seqs) AS f(seq)
                 WHERE f.seq > s.next_message_seq AND f.seq <= s.next_message_seq + step.message_count)`;
  return `cardinality(step.fold_seqs) =
               (SELECT count(*) FROM messages AS m
                 WHERE m.session_id = step.session_id AND m.seq = ANY(step.fold_seqs) AND m.state = 'active')${parts.messages ? appended : ''}`;
}

// The row checks are scalar subqueries, not EXISTS: the planner turns an EXISTS into a join, and for a
// batch it chose a scan of every open input in the database; a scalar subquery is one primary-key
// lookup per row, whatever the backlog.
const STEER_PRECONDITION = `(SELECT h.status FROM session_inputs AS h
                  WHERE h.session_id = step.session_id AND h.seq = step.host_seq) = 'running'
     AND cardinality(step.steered_seqs) =
           (SELECT count(*) FROM session_inputs AS p
             WHERE p.session_id = step.session_id AND p.seq = ANY(step.steered_seqs) AND p.status = 'pending')`;

const FINISH_PRECONDITION = `(SELECT r.status FROM session_inputs AS r
                  WHERE r.session_id = step.session_id AND r.seq = step.finish_seq) = 'running'`;

export function appendedCte(parts: StepParts): string {
  const state = parts.compaction ? `CASE WHEN fence.base_seq + m.ord = ANY(fence.fold_seqs) THEN 'compacted' ELSE 'active' END` : `'active'`;
  return `appended AS (
  INSERT INTO messages
    (session_id, seq, input_seq, round, role, kind, content, tool_calls, tool_call_id, name, is_error, state)
  SELECT fence.session_id, fence.base_seq + m.ord, m."inputSeq", m.round, m.role, m.kind, m.content, m."toolCalls",
         m."toolCallId", m.name, m."isError", ${state}
    FROM fence,
         ROWS FROM (
           jsonb_to_recordset(fence.messages) AS ("inputSeq" bigint, round integer, role text, kind text,
             content jsonb, "toolCalls" jsonb, "toolCallId" text, name text, "isError" boolean)
         ) WITH ORDINALITY AS m("inputSeq", round, role, kind, content, "toolCalls", "toolCallId", name, "isError", ord)
)`;
}

/**
 * Compaction: folded messages stay for audit, never sent to a model again. All of the fold seqs are
 * folded (the fence checked it), so that is the count recorded.
 */
export const FOLDED_CTES = `folded AS (
  UPDATE messages AS m SET state = 'compacted'
    FROM fence
   WHERE m.session_id = fence.session_id AND m.seq = ANY(fence.fold_seqs) AND m.state = 'active'
),
compacted AS (
  INSERT INTO compactions
    (session_id, note_seq, input_seq, from_seq, to_seq, folded_messages, estimated_tokens_before,
     estimated_tokens_after, model)
  SELECT fence.session_id, coalesce(c."noteSeq", fence.base_seq + c."noteOrdinal"), c."inputSeq", c."fromSeq", c."toSeq",
         cardinality(fence.fold_seqs), c."estimatedTokensBefore", c."estimatedTokensAfter", c.model
    FROM fence,
         jsonb_to_record(fence.compaction) AS c("noteSeq" bigint, "noteOrdinal" bigint, "inputSeq" bigint, "fromSeq" bigint,
           "toSeq" bigint, "estimatedTokensBefore" integer, "estimatedTokensAfter" integer, model text)
)`;

/**
 * The tool ledger, keyed by (session, tool call id): writing `started` again counts another attempt
 * and restarts the clock; a final status stamps `finished_at`. The idempotency key is
 * `<sessionId>:<toolCallId>` (I5).
 */
export const LEDGER_CTE = `ledger AS (
  INSERT INTO tool_calls AS t
    (session_id, tool_call_id, input_seq, round, name, args, status, attempts, idempotency_key,
     error_code, started_at, finished_at, duration_ms)
  SELECT fence.session_id, w."toolCallId", w."inputSeq", w.round, w.name, w.args, w.status,
         CASE WHEN w.status = 'started' THEN 1 ELSE 0 END,
         fence.session_id || ':' || w."toolCallId",
         w."errorCode", now(),
         CASE WHEN w.status IN ('completed', 'failed', 'aborted') THEN now() END,
         w."durationMs"
    FROM fence,
         jsonb_to_recordset(fence.tool_calls) AS w("toolCallId" text, "inputSeq" bigint, round integer, name text,
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
)`;

/**
 * Usage per (session, input, round): a round re-run after a crash replaces its row, not adds to it.
 * The cost was computed once, by the loop, from the prices it had; a null cost is a model with no price.
 */
export const USAGE_CTE = `usage AS (
  INSERT INTO usage_rounds
    (session_id, input_seq, round, provider, model, llm_calls, prompt_tokens, completion_tokens,
     cached_tokens, cache_write_tokens, reasoning_tokens, total_tokens, cost_picousd, tenant, agent)
  SELECT fence.session_id, u."inputSeq", u.round, u.provider, u.model, u."llmCalls", u."promptTokens",
         u."completionTokens", u."cachedTokens", u."cacheWriteTokens", u."reasoningTokens", u."totalTokens",
         u."costPicoUsd", fence.usage_tenant, fence.usage_agent
    FROM fence,
         jsonb_to_recordset(fence.usage_rounds) AS u("inputSeq" bigint, round integer, provider text, model text,
           "llmCalls" integer, "promptTokens" integer, "completionTokens" integer, "cachedTokens" integer,
           "cacheWriteTokens" integer, "reasoningTokens" integer, "totalTokens" integer, "costPicoUsd" bigint)
  ON CONFLICT (session_id, input_seq, round) DO UPDATE SET
    provider = excluded.provider,
    model = excluded.model,
    llm_calls = excluded.llm_calls,
    prompt_tokens = excluded.prompt_tokens,
    completion_tokens = excluded.completion_tokens,
    cached_tokens = excluded.cached_tokens,
    cache_write_tokens = excluded.cache_write_tokens,
    reasoning_tokens = excluded.reasoning_tokens,
    total_tokens = excluded.total_tokens,
    cost_picousd = excluded.cost_picousd,
    created_at = now()
)`;

/**
 * Steering (docs/fleet.md): pending inputs delivered into the running host are `done` from now on,
 * naming it. They get its result when it finishes — right here when this step finishes it.
 */
export function deliveredCte(parts: StepParts): string {
  const finishesHost = `CASE WHEN fence.host_seq = fence.finish_seq`;
  const outcome = `,
         result = ${finishesHost}
                       THEN fence.result || jsonb_build_object('steeredInto', fence.host_seq) ELSE i.result END,
         error_code = ${finishesHost} THEN fence.error_code ELSE i.error_code END,
         error_message = ${finishesHost} THEN fence.error_message ELSE i.error_message END`;
  return `delivered AS (
  UPDATE session_inputs AS i
     SET status = 'done',
         steered_into = fence.host_seq,
         attempts = i.attempts + 1,
         started_at = coalesce(i.started_at, fence.at),
         finished_at = fence.at${parts.finish ? outcome : ''}
    FROM fence
   WHERE i.session_id = fence.session_id AND i.seq = ANY(fence.steered_seqs) AND i.status = 'pending'
)`;
}

/**
 * The end of the input (I6); the session's side of it is in the fence. Inputs steered into
 * it by earlier steps finish with it: its result plus `steeredInto` (`||` keeps a null result null),
 * its error, its finish time. They add nothing to the stats: their run is this one.
 */
export const FINISHED_CTES = `finished AS (
  UPDATE session_inputs AS i
     SET status = fence.finish_status, result = fence.result, error_code = fence.error_code,
         error_message = fence.error_message, finished_at = fence.at
    FROM fence
   WHERE i.session_id = fence.session_id AND i.seq = fence.finish_seq AND i.status = 'running'
),
joined AS (
  UPDATE session_inputs AS i
     SET result = fence.result || jsonb_build_object('steeredInto', fence.finish_seq),
         error_code = fence.error_code,
         error_message = fence.error_message,
         finished_at = fence.at
    FROM fence
   WHERE i.session_id = fence.session_id AND i.steered_into = fence.finish_seq
)`;
