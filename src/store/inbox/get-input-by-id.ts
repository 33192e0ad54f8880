import { InputInvalidError } from '../../core/errors/index.js';
import type { InputRecord } from '../../core/session-types.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { INPUT_ID_PATTERN } from '../../fleet/input-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { decodeInput } from '../rows/input-row.js';
import { SELECT_INPUT_BY_ID_SQL } from './select-inputs-sql.js';

/** One input by its idempotency key, validated, or null. */
export async function getInputById(db: Queryable, sessionId: string, inputId: string): Promise<InputRecord | null> {
  const id = assertSessionId(sessionId);
  if (typeof inputId !== 'string' || !INPUT_ID_PATTERN.test(inputId)) {
    throw new InputInvalidError('inputId must be 1 to 200 characters of letters, digits, "_", ".", ":", "@", "/" or "-"');
  }
  const result = await db.query(SELECT_INPUT_BY_ID_SQL, [id, inputId]);
  const row: unknown = result.rows[0];
  return row === undefined ? null : decodeInput(row);
}
