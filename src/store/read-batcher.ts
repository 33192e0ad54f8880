import pg from 'pg';
import { StateCorruptError } from '../core/errors/index.js';
import { BatchQueue, type BatchOptions } from './batch-queue.js';
import { withConnection } from './connection.js';

/** A read as simple-protocol SQL (values inlined by the caller), of `results` statements. */
export interface BatchedRead {
  sql: string;
  results: number;
}

/**
 * Reads of different sessions in one round trip (DESIGN.md §9, docs/store.md): the hot reads — a
 * run's state at its start, the inbox after a final reply — are simple-protocol texts whose values
 * were validated and quoted by their callers, so the reads waiting at the end of a turn of the event
 * loop are sent, oldest first, as one multi-statement query and its results handed back in order. A
 * round trip costs the Node process a socket write and the server a wake-up whatever it carries; the
 * statements themselves run as they would alone (each takes its own snapshot). Failures are handled
 * as {@link BatchQueue} says (reads write nothing; a server error stops the query at one read, so
 * the others are sent again alone).
 */
export class ReadBatcher {
  private readonly queue: BatchQueue<BatchedRead, pg.QueryResult[]>;

  constructor(pool: pg.Pool, options: BatchOptions = {}) {
    this.queue = new BatchQueue(options, 'read', (reads) => sendReads(pool, reads), firstReads);
  }

  /** Runs the read with others ready now; resolves its own results, in statement order. */
  submit(read: BatchedRead): Promise<pg.QueryResult[]> {
    return this.queue.submit(read);
  }
}

/** The reads of one round trip, and each read's own results. */
async function sendReads(pool: pg.Pool, reads: readonly BatchedRead[]): Promise<pg.QueryResult[][]> {
  const results = await runReads(pool, reads);
  let next = 0;
  return reads.map((read) => results.slice(next, (next += read.results)));
}

/** The oldest `maxSize` waiting reads. */
function firstReads(waiting: readonly BatchedRead[], maxSize: number): Set<number> {
  return new Set(waiting.slice(0, maxSize).map((_, index) => index));
}

/** Sends the reads as one simple query; its results, one per statement, in order. */
export async function runReads(pool: pg.Pool, reads: readonly BatchedRead[]): Promise<pg.QueryResult[]> {
  const expected = reads.reduce((sum, read) => sum + read.results, 0);
  const sent = await withConnection(
    pool,
    (client) => client.query(reads.map((read) => read.sql).join(';\n')),
    (error) => error instanceof pg.DatabaseError,
  );
  // pg returns one result for one statement and an array for several.
  const results = (Array.isArray(sent) ? sent : [sent]) as pg.QueryResult[];
  if (results.length !== expected) {
    throw new StateCorruptError(`batched reads: expected ${expected} results, got ${results.length}`, { details: { expected, received: results.length } });
  }
  return results;
}
