import { z } from 'zod';
import type { ListSessionsOptions, SessionPage, SessionSummary } from '../../core/ports/session-store.js';
import { SESSION_STATUSES } from '../../core/session-types.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { sessionStatsShape, statsOf } from '../rows/session-row.js';
import { encodeSessionCursor, resolveSessionList } from './list-sessions-options.js';
import { listSessionsQuery } from './list-sessions-sql.js';

const summaryRowSchema = z.object({
  id: z.string().min(1),
  tenant: z.string().min(1),
  agent: z.string(),
  status: z.enum(SESSION_STATUSES),
  parentSessionId: z.string().min(1).nullable(),
  nextSeq: z.number().int().nonnegative(),
  createdAt: z.date(),
  updatedAt: z.date(),
  cursorAt: z.string().min(1),
  ...sessionStatsShape,
});

/**
 * A page of sessions, newest first ({@link listSessionsQuery}), in one round trip. `nextCursor`
 * points after the page's last session, null when no session follows it.
 */
export async function listSessions(db: Queryable, options: ListSessionsOptions): Promise<SessionPage> {
  const list = resolveSessionList(options);
  const result = await db.query(listSessionsQuery(list));
  const rows = result.rows.map((row: unknown) => parseRow(summaryRowSchema, row, `session ${String((row as { id?: unknown }).id)}`));
  const page = rows.slice(0, list.limit);
  const last = page.at(-1);
  const more = rows.length > list.limit && last !== undefined;
  return {
    sessions: page.map((r): SessionSummary => ({
      id: r.id,
      tenant: r.tenant,
      agent: r.agent,
      status: r.status,
      parentSessionId: r.parentSessionId,
      inputs: r.nextSeq,
      stats: statsOf(r),
      createdAt: r.createdAt,
      lastActivityAt: r.updatedAt,
    })),
    nextCursor: more ? encodeSessionCursor({ createdAt: last.cursorAt, id: last.id }) : null,
  };
}
