import { z } from 'zod';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { checkStaleAfterMs, checkWorkerId } from './registration-checks.js';
import { PRUNE_WORKERS_SQL, TOUCH_WORKER_SQL, UNREGISTER_WORKER_SQL } from './worker-rows-sql.js';

const prunedRowSchema = z.object({ workers: z.number().int().nonnegative() });

/** Marks the worker seen now; false when it has no rows. */
export async function touchWorker(db: Queryable, workerId: string): Promise<boolean> {
  const result = await db.query(TOUCH_WORKER_SQL, [checkWorkerId(workerId)]);
  return (result.rowCount ?? 0) > 0;
}

/** Marks the worker's rows stopped (kept until pruned). */
export async function unregisterWorker(db: Queryable, workerId: string): Promise<void> {
  await db.query(UNREGISTER_WORKER_SQL, [checkWorkerId(workerId)]);
}

/** Deletes the rows of workers not seen for `staleAfterMs`; answers how many workers went. */
export async function pruneWorkers(db: Queryable, staleAfterMs: number): Promise<number> {
  const result = await db.query(PRUNE_WORKERS_SQL, [checkStaleAfterMs(staleAfterMs)]);
  return parseRow(prunedRowSchema, result.rows[0], 'the pruned workers').workers;
}
