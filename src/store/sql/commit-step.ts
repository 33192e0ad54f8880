/**
 * One step of a run as ONE autocommit statement (DESIGN.md I3, §9): a chain of data-modifying CTEs
 * instead of BEGIN, six statements and COMMIT. A statement is atomic, so the step is all-or-nothing
 * without a transaction block, and it costs one round trip.
 *
 * **Variants.** The statement is generated from the parts the step has ({@link StepParts}): messages,
 * pending state, compaction, tool ledger, usage, steering, finishing. An absent part would be a no-op
 * in the statement with every part (an empty array, a null), but its CTEs would still cost executor
 * time, so its CTEs, its fence precondition and its fence assignments are left out instead. Each
 * variant has its own name, so it is prepared (planned) once per connection, and numbers only the
 * parameters it uses ({@link CommitStepStatement.params}).
 *
 * **The fence.** `fence` is the only write to the `sessions` row — a statement must not update a row
 * twice (PostgreSQL would silently apply one of the updates) — so it carries the message-seq
 * allocation, the pending state and, when the step finishes an input, the session's end of run
 * (status, stats, first/last input time). It matches only while the lease token is the current one
 * AND every precondition of the step holds:
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
 */

/** Which parts a step has: each one's SQL is in the statement only when it is present. */
export interface StepParts {
  /** Messages to append (at least one). */
  messages: boolean;
  /** A pending state to set, or to clear (null). */
  pending: boolean;
  /** Messages to fold, with the compaction's audit record. */
  compaction: boolean;
  /** Tool-ledger writes (at least one). */
  ledger: boolean;
  /** Usage rounds (at least one). */
  usage: boolean;
  /** Pending inputs delivered into the running one. */
  steer: boolean;
  /** The input this step ends. */
  finish: boolean;
}

/**
 * The values a step statement may take, by name; a variant numbers those it uses in this order.
 * `messages` jsonb array of `MessageColumns`; `pending` jsonb (null clears); `toolCalls` jsonb array
 * (at most one per id); `usageRounds` jsonb array (one per key); `foldSeqs` bigint[]; `compaction`
 * jsonb (`noteSeq` or `noteOrdinal` — the 1-based place of the note among `messages` — `inputSeq`,
 * `fromSeq`, `toSeq`, `estimatedTokensBefore`, `estimatedTokensAfter`, `model`); `steeredSeqs`
 * bigint[] and `hostSeq` their host's seq; `finishSeq` the input the step ends, `finishStatus` its
 * status, `result` its result (jsonb or null), `errorCode`, `errorMessage`.
 */
export const STEP_PARAMS = [
  'sessionId',
  'leaseToken',
  'messages',
  'pending',
  'toolCalls',
  'usageRounds',
  'foldSeqs',
  'compaction',
  'steeredSeqs',
  'hostSeq',
  'finishSeq',
  'finishStatus',
  'result',
  'errorCode',
  'errorMessage',
] as const;

export type StepParam = (typeof STEP_PARAMS)[number];

/** One variant of the step statement: what to prepare it as, and which value each `$n` is. */
export interface CommitStepStatement {
  /** `loopfleet_commit_step_` and a letter per part present (`mpclusf` order), or `none`. */
  name: string;
  text: string;
  /** `params[n - 1]` is the value of `$n`. */
  params: readonly StepParam[];
}

const PART_LETTERS: readonly [keyof StepParts, string][] = [
  ['messages', 'm'],
  ['pending', 'p'],
  ['compaction', 'c'],
  ['ledger', 'l'],
  ['usage', 'u'],
  ['steer', 's'],
  ['finish', 'f'],
];

/**
 * Generated texts by part letters. A memo of a pure function, bounded by the 128 combinations of
 * parts (a run uses about ten), so it holds no state anything depends on.
 */
const variants = new Map<string, CommitStepStatement>();

/** The statement for a step with these parts, generated once per process. */
export function commitStepStatement(parts: StepParts): CommitStepStatement {
  const letters = PART_LETTERS.filter(([part]) => parts[part])
    .map(([, letter]) => letter)
    .join('');
  let statement = variants.get(letters);
  if (statement === undefined) {
    statement = numberParams(`loopfleet_commit_step_${letters || 'none'}`, generate(parts));
    variants.set(letters, statement);
  }
  return statement;
}

/** Replaces each `$name` with its `$n`, numbering the names used in {@link STEP_PARAMS} order. */
function numberParams(name: string, named: string): CommitStepStatement {
  const used = new Set<string>();
  for (const match of named.matchAll(/\$([A-Za-z]+)/g)) used.add(match[1]!);
  const unknown = [...used].filter((param) => !(STEP_PARAMS as readonly string[]).includes(param));
  if (unknown.length > 0) throw new Error(`unknown parameter in the step statement: ${unknown.join(', ')}`);
  const params = STEP_PARAMS.filter((param) => used.has(param));
  const text = named.replace(/\$([A-Za-z]+)/g, (_, param: StepParam) => `$${params.indexOf(param) + 1}`);
  return { name, text, params };
}

function generate(parts: StepParts): string {
  const step = stepCte(parts);
  const ctes = [
    step,
    fenceCte(parts, step !== undefined),
    parts.messages && appendedCte(parts),
    parts.compaction && FOLDED_CTES,
    parts.ledger && LEDGER_CTE,
    parts.usage && USAGE_CTE,
    parts.steer && deliveredCte(parts),
    parts.finish && FINISHED_CTES,
  ].filter((cte): cte is string => typeof cte === 'string');
  const steered = parts.steer ? `\n                  AND o.seq <> ALL($steeredSeqs::bigint[])` : '';
  return `
WITH ${ctes.join(',\n')}
SELECT fence.base_seq AS "baseSeq",
       EXISTS (SELECT 1 FROM session_inputs AS o
                WHERE o.session_id = $sessionId AND o.status IN ('pending', 'running') AND o.status = 'pending'${steered})
       OR fence.next_seq > (SELECT seen.next_seq FROM sessions AS seen WHERE seen.id = $sessionId) AS "pendingInputs"
  FROM fence`;
}

/** What the fence reads besides the row: the message count, the clock, and a finish's stats. */
function stepCte(parts: StepParts): string | undefined {
  const columns = [
    parts.messages && 'jsonb_array_length($messages::jsonb) AS message_count',
    (parts.steer || parts.finish) && 'clock_timestamp() AS at',
    // The run a finishing step adds to the session's stats: counts from the stored result itself.
    ...(parts.finish ? FINISH_STATS.map(([column, path]) => `coalesce(($result::jsonb ${path})::bigint, 0) AS ${column}`) : []),
  ].filter((column): column is string => typeof column === 'string');
  return columns.length === 0 ? undefined : `step AS (\n  SELECT ${columns.join(',\n         ')}\n)`;
}

/** Session stats a finished run adds, and where its result holds them. */
const FINISH_STATS = [
  ['rounds', "->> 'rounds'"],
  ['tool_calls', "->> 'toolCalls'"],
  ['llm_calls', "#>> '{usage,llmCalls}'"],
  ['prompt_tokens', "#>> '{usage,promptTokens}'"],
  ['completion_tokens', "#>> '{usage,completionTokens}'"],
  ['cached_tokens', "#>> '{usage,cachedTokens}'"],
  ['reasoning_tokens', "#>> '{usage,reasoningTokens}'"],
  ['total_tokens', "#>> '{usage,totalTokens}'"],
] as const;

function fenceCte(parts: StepParts, fromStep: boolean): string {
  const pending = parts.pending ? '$pending::jsonb' : 's.pending';
  const sets = [
    parts.messages && 'next_message_seq = s.next_message_seq + step.message_count',
    parts.pending && `pending = ${pending}`,
    ...(parts.finish
      ? [
          `status = CASE
                    -- A question still waiting (a send refused while it waits) keeps the session waiting.
                    WHEN jsonb_array_length(coalesce(${pending} -> 'interactions', '[]'::jsonb)) > 0
                      OR $result::jsonb ->> 'status' = 'waiting_for_input' THEN 'waiting_for_input'
                    ELSE 'idle'
                  END`,
          'stat_inputs = s.stat_inputs + 1',
          ...FINISH_STATS.map(([column]) => `stat_${column} = s.stat_${column} + step.${column}`),
          'first_input_at = coalesce(s.first_input_at, step.at)',
          'last_input_at = step.at',
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
  return `fence AS (
  UPDATE sessions AS s
     SET ${sets.join(',\n         ')}${fromStep ? '\n    FROM step' : ''}
   WHERE s.id = $sessionId AND s.lease_token = $leaseToken::bigint${preconditions.map((c) => `\n     AND ${c}`).join('')}
  RETURNING ${baseSeq} AS base_seq, s.next_seq${parts.steer || parts.finish ? ', step.at' : ''}
)`;
}

/** Every folded seq is an active message, or (only if the step has messages) one it appends. */
function foldPrecondition(parts: StepParts): string {
  const appended = `
             + (SELECT count(*) FROM unnest($foldSeqs::bigint[]) AS f(seq)
                 WHERE f.seq > s.next_message_seq AND f.seq <= s.next_message_seq + step.message_count)`;
  return `cardinality($foldSeqs::bigint[]) =
               (SELECT count(*) FROM messages AS m
                 WHERE m.session_id = $sessionId AND m.seq = ANY($foldSeqs::bigint[]) AND m.state = 'active')${parts.messages ? appended : ''}`;
}

const STEER_PRECONDITION = `EXISTS (SELECT 1 FROM session_inputs AS h
                  WHERE h.session_id = $sessionId AND h.seq = $hostSeq::bigint AND h.status = 'running')
     AND cardinality($steeredSeqs::bigint[]) =
           (SELECT count(*) FROM session_inputs AS p
             WHERE p.session_id = $sessionId AND p.seq = ANY($steeredSeqs::bigint[]) AND p.status = 'pending')`;

const FINISH_PRECONDITION = `EXISTS (SELECT 1 FROM session_inputs AS r
                  WHERE r.session_id = $sessionId AND r.seq = $finishSeq::bigint AND r.status = 'running')`;

function appendedCte(parts: StepParts): string {
  const state = parts.compaction ? `CASE WHEN fence.base_seq + m.ord = ANY($foldSeqs::bigint[]) THEN 'compacted' ELSE 'active' END` : `'active'`;
  return `appended AS (
  INSERT INTO messages
    (session_id, seq, input_seq, round, role, kind, content, tool_calls, tool_call_id, name, is_error, state)
  SELECT $sessionId, fence.base_seq + m.ord, m."inputSeq", m.round, m.role, m.kind, m.content, m."toolCalls",
         m."toolCallId", m.name, m."isError", ${state}
    FROM fence,
         ROWS FROM (
           jsonb_to_recordset($messages::jsonb) AS ("inputSeq" bigint, round integer, role text, kind text,
             content jsonb, "toolCalls" jsonb, "toolCallId" text, name text, "isError" boolean)
         ) WITH ORDINALITY AS m("inputSeq", round, role, kind, content, "toolCalls", "toolCallId", name, "isError", ord)
)`;
}

/**
 * Compaction: folded messages stay for audit, never sent to a model again. All of the fold seqs are
 * folded (the fence checked it), so that is the count recorded.
 */
const FOLDED_CTES = `folded AS (
  UPDATE messages AS m SET state = 'compacted'
    FROM fence
   WHERE m.session_id = $sessionId AND m.seq = ANY($foldSeqs::bigint[]) AND m.state = 'active'
),
compacted AS (
  INSERT INTO compactions
    (session_id, note_seq, input_seq, from_seq, to_seq, folded_messages, estimated_tokens_before,
     estimated_tokens_after, model)
  SELECT $sessionId, coalesce(c."noteSeq", fence.base_seq + c."noteOrdinal"), c."inputSeq", c."fromSeq", c."toSeq",
         cardinality($foldSeqs::bigint[]), c."estimatedTokensBefore", c."estimatedTokensAfter", c.model
    FROM fence,
         jsonb_to_record($compaction::jsonb) AS c("noteSeq" bigint, "noteOrdinal" bigint, "inputSeq" bigint, "fromSeq" bigint,
           "toSeq" bigint, "estimatedTokensBefore" integer, "estimatedTokensAfter" integer, model text)
)`;

/**
 * The tool ledger, keyed by (session, tool call id): writing `started` again counts another attempt
 * and restarts the clock; a final status stamps `finished_at`. The idempotency key is
 * `<sessionId>:<toolCallId>` (DESIGN.md I5).
 */
const LEDGER_CTE = `ledger AS (
  INSERT INTO tool_calls AS t
    (session_id, tool_call_id, input_seq, round, name, args, status, attempts, idempotency_key,
     error_code, started_at, finished_at, duration_ms)
  SELECT $sessionId, w."toolCallId", w."inputSeq", w.round, w.name, w.args, w.status,
         CASE WHEN w.status = 'started' THEN 1 ELSE 0 END,
         $sessionId || ':' || w."toolCallId",
         w."errorCode", now(),
         CASE WHEN w.status IN ('completed', 'failed', 'aborted') THEN now() END,
         w."durationMs"
    FROM fence,
         jsonb_to_recordset($toolCalls::jsonb) AS w("toolCallId" text, "inputSeq" bigint, round integer, name text,
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

/** Usage per (session, input, round): a round re-run after a crash replaces its row, not adds to it. */
const USAGE_CTE = `usage AS (
  INSERT INTO usage_rounds
    (session_id, input_seq, round, provider, model, llm_calls, prompt_tokens, completion_tokens,
     cached_tokens, reasoning_tokens, total_tokens)
  SELECT $sessionId, u."inputSeq", u.round, u.provider, u.model, u."llmCalls", u."promptTokens",
         u."completionTokens", u."cachedTokens", u."reasoningTokens", u."totalTokens"
    FROM fence,
         jsonb_to_recordset($usageRounds::jsonb) AS u("inputSeq" bigint, round integer, provider text, model text,
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
)`;

/**
 * Steering (DESIGN.md §4.4): pending inputs delivered into the running host are `done` from now on,
 * naming it. They get its result when it finishes — right here when this step finishes it.
 */
function deliveredCte(parts: StepParts): string {
  const finishesHost = `CASE WHEN $hostSeq::bigint = $finishSeq::bigint`;
  const outcome = `,
         result = ${finishesHost}
                       THEN $result::jsonb || jsonb_build_object('steeredInto', $hostSeq::bigint) ELSE i.result END,
         error_code = ${finishesHost} THEN $errorCode::text ELSE i.error_code END,
         error_message = ${finishesHost} THEN $errorMessage::text ELSE i.error_message END`;
  return `delivered AS (
  UPDATE session_inputs AS i
     SET status = 'done',
         steered_into = $hostSeq::bigint,
         attempts = i.attempts + 1,
         started_at = coalesce(i.started_at, fence.at),
         finished_at = fence.at${parts.finish ? outcome : ''}
    FROM fence
   WHERE i.session_id = $sessionId AND i.seq = ANY($steeredSeqs::bigint[]) AND i.status = 'pending'
)`;
}

/**
 * The end of the input (DESIGN.md I6); the session's side of it is in the fence. Inputs steered into
 * it by earlier steps finish with it: its result plus `steeredInto` (`||` keeps a null result null),
 * its error, its finish time. They add nothing to the stats: their run is this one.
 */
const FINISHED_CTES = `finished AS (
  UPDATE session_inputs AS i
     SET status = $finishStatus::text, result = $result::jsonb, error_code = $errorCode::text,
         error_message = $errorMessage::text, finished_at = fence.at
    FROM fence
   WHERE i.session_id = $sessionId AND i.seq = $finishSeq::bigint AND i.status = 'running'
),
joined AS (
  UPDATE session_inputs AS i
     SET result = $result::jsonb || jsonb_build_object('steeredInto', $finishSeq::bigint),
         error_code = $errorCode::text,
         error_message = $errorMessage::text,
         finished_at = fence.at
    FROM fence
   WHERE i.session_id = $sessionId AND i.steered_into = $finishSeq::bigint
)`;

/**
 * Why a step was refused, read after {@link commitStepStatement} matched nothing on its retry (the
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
