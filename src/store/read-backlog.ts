import { z } from 'zod';
import type { Queryable } from './queryable.js';
import { parseRow } from './rows/parse-row.js';
import { READ_BACKLOG_SQL } from './sql/read-backlog.js';

/** Inputs waiting for a worker, across every session. */
export interface Backlog {
  /** Inputs accepted and not started. */
  pending: number;
  /** How long the oldest of them has waited, in seconds (0 when none waits). */
  oldestSeconds: number;
}

const backlogRowSchema = z.object({ pending: z.number().int().nonnegative(), oldest_seconds: z.number() });

/** One aggregate read of the backlog (for `/metrics`: the scaling signal). */
export async function readBacklog(db: Queryable): Promise<Backlog> {
  const result = await db.query({ name: 'loopfleet_read_backlog', text: READ_BACKLOG_SQL });
  const row = parseRow(backlogRowSchema, result.rows[0], 'the backlog');
  return { pending: row.pending, oldestSeconds: Math.max(0, row.oldest_seconds) };
}
