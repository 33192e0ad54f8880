import { z } from 'zod';
import { SessionNotFoundError } from '../../core/errors/index.js';
import type { CancelledTree } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { REQUEST_CANCEL_TREE_SQL } from './request-cancel-tree-sql.js';

const treeRowSchema = z.object({ requestedAt: z.date().nullable(), tenant: z.string().nullable(), descendants: z.array(z.string().min(1)) });

/**
 * `requestCancel` for the session and every session below it ({@link REQUEST_CANCEL_TREE_SQL}): the
 * descendants also get `cascadeCancelledAt`. Not fenced: anyone may ask. `session.not_found` when
 * there is no such session.
 */
export async function requestCancelTree(db: Queryable, sessionId: string): Promise<CancelledTree> {
  const id = assertSessionId(sessionId);
  const result = await db.query(REQUEST_CANCEL_TREE_SQL, [id]);
  const row = parseRow(treeRowSchema, result.rows[0], `session ${id}`);
  if (row.requestedAt === null || row.tenant === null) throw new SessionNotFoundError(`session ${id} does not exist`, { details: { sessionId: id } });
  return { requestedAt: row.requestedAt, descendants: row.descendants, tenant: row.tenant };
}
