import { z } from 'zod';
import type { ChildResultPayload } from '../../core/ports/children.js';
import type { ChildDelivery } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { validateChildPayload } from './child-validation.js';
import { DELIVER_CHILD_RESULT_SQL } from './deliver-child-result-sql.js';

const deliveryRowSchema = z.object({ parentSessionId: z.string().min(1), seq: z.number().int().positive() });

/**
 * Not fenced (the child's holder calls it, not the parent's). Puts a child's outcome into its
 * parent's inbox once ({@link DELIVER_CHILD_RESULT_SQL}): null when the session is not a child, the
 * result was delivered before, or (for a waiting call) the parent input it answers has ended.
 */
export async function deliverChildResult(db: Queryable, childSessionId: string, payload: ChildResultPayload): Promise<ChildDelivery | null> {
  const id = assertSessionId(childSessionId);
  const { wait, payloadText } = validateChildPayload(payload);
  const result = await db.query(DELIVER_CHILD_RESULT_SQL, [id, payloadText, wait]);
  const row: unknown = result.rows[0];
  return row === undefined ? null : parseRow(deliveryRowSchema, row, `delivery of child ${id}`);
}
