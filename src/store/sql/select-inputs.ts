import { INPUT_COLUMNS } from '../rows/input-row.js';

/** One input by seq. Params: $1 session id, $2 seq. */
export const SELECT_INPUT_BY_SEQ_SQL = `SELECT ${INPUT_COLUMNS}
  FROM session_inputs WHERE session_id = $1 AND seq = $2`;

/** One input by its idempotency key. Params: $1 session id, $2 input id. */
export const SELECT_INPUT_BY_ID_SQL = `SELECT ${INPUT_COLUMNS}
  FROM session_inputs WHERE session_id = $1 AND input_id = $2`;

/**
 * A page of inputs in seq order, as simple-protocol SQL (it is read in a shared round trip, see
 * `../read-batcher.ts`). `sessionLiteral` must be an id that passed `assertSessionId`, quoted with
 * `escapeLiteral`; `statuses` (or null for all) members of `INPUT_STATUSES`; `afterSeq` and `limit`
 * validated integers. Its predicate with a status list is that of `session_inputs_open_idx` when the
 * list is pending/running.
 */
export function listInputsSql(sessionLiteral: string, statuses: readonly string[] | null, afterSeq: number, limit: number): string {
  const list = statuses?.map((value) => `'${value}'`).join(', ');
  const status = list === undefined ? '' : list === '' ? '\n   AND false' : `\n   AND status IN (${list})`;
  return `SELECT ${INPUT_COLUMNS}
  FROM session_inputs
 WHERE session_id = ${sessionLiteral}${status}
   AND seq > ${afterSeq}
 ORDER BY seq
 LIMIT ${limit}`;
}
