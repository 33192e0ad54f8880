import { z } from 'zod';
import type { ChildSessionRecord } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { LIST_CHILDREN_SQL } from './list-children-sql.js';

const childRowSchema = z.object({
  sessionId: z.string().min(1),
  agent: z.string().min(1),
  inputSeq: z.number().int().positive(),
  toolCallId: z.string().min(1),
  wait: z.boolean(),
  depth: z.number().int().nonnegative(),
  status: z.string().min(1),
  createdAt: z.date(),
});

/** The session's children in spawn order ({@link LIST_CHILDREN_SQL}); empty for none, or no such session. */
export async function listChildren(db: Queryable, sessionId: string): Promise<ChildSessionRecord[]> {
  const id = assertSessionId(sessionId);
  const result = await db.query(LIST_CHILDREN_SQL, [id]);
  return result.rows.map((row: unknown) => parseRow(childRowSchema, row, `child of session ${id}`));
}
