import type { InputRecord } from '../../core/session-types.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertSeq } from '../postgres/arguments.js';
import type { Queryable } from '../postgres/queryable.js';
import { decodeInput } from '../rows/input-row.js';
import { SELECT_INPUT_BY_SEQ_SQL } from './select-inputs-sql.js';

/** One input by seq, validated, or null. */
export async function getInput(db: Queryable, sessionId: string, seq: number): Promise<InputRecord | null> {
  const id = assertSessionId(sessionId);
  const result = await db.query({ name: 'loopfleet_get_input', text: SELECT_INPUT_BY_SEQ_SQL, values: [id, assertSeq(seq)] });
  const row: unknown = result.rows[0];
  return row === undefined ? null : decodeInput(row);
}
