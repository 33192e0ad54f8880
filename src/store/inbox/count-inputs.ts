import { z } from 'zod';
import type { InputStatusCounts } from '../../core/ports/session-store.js';
import { INPUT_STATUSES } from '../../core/session-types.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { COUNT_INPUTS_SQL } from './count-inputs-sql.js';

const countRowSchema = z.object({ status: z.enum(INPUT_STATUSES), count: z.number().int().nonnegative() });

/**
 * The session's inputs by status, every status present (0 when none; all zeros for a session that
 * does not exist). One aggregate read: what `SessionQueue.stats` needs without reading the inbox.
 */
export async function countInputs(db: Queryable, sessionId: string): Promise<InputStatusCounts> {
  const id = assertSessionId(sessionId);
  const result = await db.query({ name: 'loopfleet_count_inputs', text: COUNT_INPUTS_SQL, values: [id] });
  const counts = Object.fromEntries(INPUT_STATUSES.map((status) => [status, 0])) as InputStatusCounts;
  for (const row of result.rows as unknown[]) {
    const { status, count } = parseRow(countRowSchema, row, `input counts of session ${id}`);
    counts[status] = count;
  }
  return counts;
}
