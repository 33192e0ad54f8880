import { INPUT_COLUMNS } from '../rows/input-row.js';

/** One input by seq. Params: $1 session id, $2 seq. */
export const SELECT_INPUT_BY_SEQ_SQL = `SELECT ${INPUT_COLUMNS}
  FROM session_inputs WHERE session_id = $1 AND seq = $2`;

/** One input by its idempotency key. Params: $1 session id, $2 input id. */
export const SELECT_INPUT_BY_ID_SQL = `SELECT ${INPUT_COLUMNS}
  FROM session_inputs WHERE session_id = $1 AND input_id = $2`;

/** One session's page: its session, as a quoted literal, and where the page starts and how long it is. */
export interface InputPageKey {
  /** An id that passed `assertSessionId` (`[A-Za-z0-9_.:-]` only), quoted with `escapeLiteral`. */
  sessionLiteral: string;
  /** Validated integers. */
  afterSeq: number;
  limit: number;
}

/**
 * Pages of inputs in seq order for any number of sessions, all with the same status filter, as one
 * simple-protocol statement (it is read in a shared round trip, see `../batching/read-batcher.ts`): each
 * session's page is its own index scan (`LATERAL … ORDER BY seq LIMIT`), the predicate with a
 * pending/running list that of `session_inputs_open_idx`. `statuses` (or null for all) are members
 * of `INPUT_STATUSES`; every row names its session in `sessionId`.
 */
export function listInputsSql(statuses: readonly string[] | null, affectsRun: boolean, pages: readonly InputPageKey[]): string {
  const list = statuses?.map((value) => `'${value}'`).join(', ');
  const onlyStatus = list === undefined ? '' : list === '' ? '\n       AND false' : `\n       AND status IN (${list})`;
  const status = affectsRun ? `${onlyStatus}\n       AND (mode IN ('steer', 'interrupt') OR kind = 'timer')` : onlyStatus;
  const values = pages.map((page) => `(${page.sessionLiteral}, ${page.afterSeq}, ${page.limit})`).join(', ');
  return `SELECT page.*
  FROM (VALUES ${values}) AS wanted (session_id, after_seq, max_rows)
 CROSS JOIN LATERAL (
    SELECT ${INPUT_COLUMNS}
      FROM session_inputs
     WHERE session_id = wanted.session_id${status}
       AND seq > wanted.after_seq
     ORDER BY seq
     LIMIT wanted.max_rows) AS page
 ORDER BY page."sessionId", page.seq`;
}
