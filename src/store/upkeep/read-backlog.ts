import { z } from 'zod';
import type { Backlog } from '../../core/ports/upkeep-store.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { READ_BACKLOG_SQL } from './read-backlog-sql.js';

const backlogRowSchema = z.object({
  pending: z.number().int().nonnegative(),
  sessions_waiting: z.number().int().nonnegative(),
  oldest_wait_seconds: z.number(),
});

/** One aggregate read of the backlog (for `/metrics`: the signal to scale workers on), of one queue's sessions unless `queue` is null. */
export async function readBacklog(db: Queryable, queue: string | null = null): Promise<Backlog> {
  const result = await db.query({ name: 'loopfleet_read_backlog', text: READ_BACKLOG_SQL, values: [queue] });
  const row = parseRow(backlogRowSchema, result.rows[0], 'the backlog');
  return { pending: row.pending, sessionsWaiting: row.sessions_waiting, oldestWaitSeconds: Math.max(0, row.oldest_wait_seconds) };
}
