/**
 * Steps of a run as ONE autocommit statement (I3; docs/store.md): a chain of data-modifying CTEs
 * instead of BEGIN, six statements and COMMIT. A statement is atomic, so the step is all-or-nothing
 * without a transaction block, and it costs one round trip.
 *
 * **Batches.** The statement takes its steps as rows — `$1` is a JSON array with one record per step
 * ({@link STEP_FIELDS}), each of a different session — so steps of many sessions that are ready at
 * the same moment commit together: one statement, one WAL flush (`../batching/row-batcher.ts`). Every row is
 * fenced on its own: a row whose token or precondition fails is left out of `fence`, and so out of
 * every write, while the others apply. A single step is a batch of one.
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
 * Every other CTE joins `fence`, so a step it does not match writes nothing; the client then tells
 * `lease.lost` from `state.conflict` by reading {@link STEP_REFUSAL_SQL}. Before `fence` writes, the
 * rows it may write are locked in session id order (`session_locks`, `../fencing/lock-sessions-sql.ts`), so steps
 * batched with other sessions never deadlock with accepts, claims or releases sharing some of them;
 * waiting there for a concurrent writer, then re-checking on the latest version, is what the UPDATE's
 * own wait did before.
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
 * see them); every time stamp of a step is one clock reading, `step.at`, taken after the snapshot, so it never
 * precedes the `accepted_at` or `started_at` of a row the step touches.
 *
 * Returns one row per applied step — its `sessionId`, the last message seq before the step (the n-th
 * message got `baseSeq + n`), `pendingInputs` and `pendingSteers` (those of them that would change a
 * run: mode `steer` or `interrupt`, or a timer; an input accepted after the snapshot counts for both,
 * its mode unread) — and none for a refused one. `pendingInputs` is true when an input is `pending` as the
 * step commits: in the snapshot (less the ones this step steers; the predicate implies that of
 * `session_inputs_open_idx`, so only open inputs are read) or accepted after it, which moved the
 * locked row's `next_seq` past the snapshot's (an accept bumps it under the same row lock, and
 * nobody but this holder could have claimed the input since).
 */

import type { StepParts } from './step-parts.js';
import { appendedCte, deliveredCte, fenceCte, FINISHED_CTES, FOLDED_CTES, LEDGER_CTE, stepColumns, USAGE_CTE } from './commit-step-parts-sql.js';

/**
 * The fields of a step's record in `$1`, with their SQL types; a variant declares those it uses.
 * `messages` an array of `MessageColumns`; `pending` an object (null clears); `tool_calls` an array
 * (at most one per id); `usage_rounds` an array (one per key); `fold_seqs` the seqs to fold;
 * `compaction` an object (`noteSeq` or `noteOrdinal` — the 1-based place of the note among
 * `messages` — `inputSeq`, `fromSeq`, `toSeq`, `estimatedTokensBefore`, `estimatedTokensAfter`,
 * `model`); `steered_seqs` and `host_seq` their host's seq; `finish_seq` the input the step ends,
 * `finish_status` its status, `result` its result (or null), `error_code`, `error_message`.
 */
export const STEP_FIELDS = {
  session_id: 'text',
  lease_token: 'bigint',
  messages: 'jsonb',
  pending: 'jsonb',
  tool_calls: 'jsonb',
  usage_rounds: 'jsonb',
  fold_seqs: 'bigint[]',
  compaction: 'jsonb',
  steered_seqs: 'bigint[]',
  host_seq: 'bigint',
  finish_seq: 'bigint',
  finish_status: 'text',
  result: 'jsonb',
  error_code: 'text',
  error_message: 'text',
} as const;

export type StepField = keyof typeof STEP_FIELDS;

/** One variant of the step statement: what to prepare it as, and which fields its records carry. */
export interface CommitStepStatement {
  /** `loopfleet_commit_step_` and a letter per part present (`mpclusf` order), or `none`. */
  name: string;
  text: string;
  /** The record fields the statement reads, in {@link STEP_FIELDS} order. */
  fields: readonly StepField[];
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

/** The statement for steps with these parts, generated once per process. */
export function commitStepStatement(parts: StepParts): CommitStepStatement {
  const letters = PART_LETTERS.filter(([part]) => parts[part])
    .map(([, letter]) => letter)
    .join('');
  let statement = variants.get(letters);
  if (statement === undefined) {
    statement = generate(`loopfleet_commit_step_${letters || 'none'}`, parts);
    variants.set(letters, statement);
  }
  return statement;
}

function generate(name: string, parts: StepParts): CommitStepStatement {
  const ctes = [
    fenceCte(parts),
    parts.messages && appendedCte(parts),
    parts.compaction && FOLDED_CTES,
    parts.ledger && LEDGER_CTE,
    parts.usage && USAGE_CTE,
    parts.steer && deliveredCte(parts),
    parts.finish && FINISHED_CTES,
  ].filter((cte): cte is string => typeof cte === 'string');
  const steered = parts.steer ? `\n                  AND o.seq <> ALL(fence.steered_seqs)` : '';
  const pendingWhere = `o.session_id = fence.session_id AND o.status IN ('pending', 'running') AND o.status = 'pending'${steered}`;
  const acceptedSince = `fence.next_seq > (SELECT seen.next_seq FROM sessions AS seen WHERE seen.id = fence.session_id)`;
  const body = `${ctes.join(',\n')}
SELECT fence.session_id AS "sessionId", fence.base_seq AS "baseSeq",
       EXISTS (SELECT 1 FROM session_inputs AS o
                WHERE ${pendingWhere})
       OR ${acceptedSince} AS "pendingInputs",
       EXISTS (SELECT 1 FROM session_inputs AS o
                WHERE ${pendingWhere}
                  AND (o.mode IN ('steer', 'interrupt') OR o.kind = 'timer'))
       OR ${acceptedSince} AS "pendingSteers"
  FROM fence`;
  // The record declares only the fields some part reads.
  const used = new Set([...body.matchAll(/\b(?:step|fence)\.(\w+)/g)].map((match) => match[1]));
  const fields = (Object.keys(STEP_FIELDS) as StepField[]).filter((field) => used.has(field));
  const columns = ['b.*', ...stepColumns(parts)];
  const text = `
WITH step AS (
  SELECT ${columns.join(',\n         ')}
    FROM jsonb_to_recordset($1::jsonb) AS b(${fields.map((field) => `${field} ${STEP_FIELDS[field]}`).join(', ')})
),
${body}`;
  return { name, text, fields };
}

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
