import pg from 'pg';
import { ConfigInvalidError } from '../core/errors/index.js';
import { withConnection } from './connection.js';

/** How writes of different sessions are grouped into one statement (cross-session group commit). */
export interface RowBatchOptions {
  /** Most rows (one session's write each) one statement carries. Default 64. */
  maxSize?: number;
  /**
   * Most batched statements running at once. Writes that become ready meanwhile wait for one of them
   * to finish and then go together, so a busy worker writes many sessions per statement and per WAL
   * flush, while an idle one sends each write at once. Default 2.
   */
  maxInFlight?: number;
}

/** A statement that takes its rows as `$1`, a JSON array of records, and returns a row per applied record. */
export interface BatchStatement {
  /** The prepared statement's name. */
  name: string;
  text: string;
  /** The column of the returned rows that holds their session id. Default `sessionId`. */
  key?: string;
}

/** One session's write, ready to go: its statement and its record in the statement's `$1`. */
export interface BatchedRow {
  statement: BatchStatement;
  sessionId: string;
  /** The record as JSON text (one element of the `$1` array). */
  record: string;
}

interface Waiting {
  row: BatchedRow;
  /** Submission order, to send the statement whose oldest row waited longest first. */
  order: number;
  /** The row the statement returned for this session, or undefined: its write was refused. */
  resolve: (row: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit across sessions (DESIGN.md §9, docs/store.md). `submit` queues a session's write by
 * statement; at the end of the current turn of the event loop, and whenever a statement finishes,
 * the waiting rows of one statement are sent together — as many statements as
 * {@link RowBatchOptions.maxInFlight} allows, each of at most `maxSize` rows, never two rows of one
 * session in one statement (a statement must not update a row twice; the second waits for the next).
 * The statements fence each row on its own: a refused row resolves undefined and the others apply.
 *
 * A statement the server fails (an error response: it rolled back and wrote nothing) is sent again
 * one row per statement, so one row's error is only its own. Any other failure — a lost connection,
 * when whether the statement committed is unknown — rejects every row of it, as it would reject a
 * lone write: sending again could apply a write twice.
 */
export class RowBatcher {
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly maxSize: number;
  private readonly maxInFlight: number;
  private inFlight = 0;
  private submitted = 0;
  private flushScheduled = false;

  constructor(
    private readonly pool: pg.Pool,
    options: RowBatchOptions = {},
  ) {
    this.maxSize = positiveInteger(options.maxSize ?? 64, 'maxSize');
    this.maxInFlight = positiveInteger(options.maxInFlight ?? 2, 'maxInFlight');
  }

  /** Writes the row with others ready now; resolves the statement's row for its session, or undefined if refused. */
  submit(row: BatchedRow): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(row.statement.name);
      const waiting: Waiting = { row, order: this.submitted++, resolve, reject };
      if (queue === undefined) this.waiting.set(row.statement.name, [waiting]);
      else queue.push(waiting);
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After the current turn: every write that becomes ready in it joins the same statement.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight) {
      const batch = this.takeOldest();
      if (batch === undefined) return;
      this.inFlight += 1;
      void this.send(batch).finally(() => {
        this.inFlight -= 1;
        this.scheduleFlush();
      });
    }
  }

  /** Up to `maxSize` waiting rows of the statement waiting longest, at most one per session. */
  private takeOldest(): Waiting[] | undefined {
    let oldest: Waiting[] | undefined;
    for (const queue of this.waiting.values()) {
      if (oldest === undefined || queue[0]!.order < oldest[0]!.order) oldest = queue;
    }
    if (oldest === undefined) return undefined;
    const name = oldest[0]!.row.statement.name;
    const batch: Waiting[] = [];
    const left: Waiting[] = [];
    const sessions = new Set<string>();
    for (const waiting of oldest) {
      if (batch.length < this.maxSize && !sessions.has(waiting.row.sessionId)) {
        sessions.add(waiting.row.sessionId);
        batch.push(waiting);
      } else {
        left.push(waiting);
      }
    }
    if (left.length === 0) this.waiting.delete(name);
    else this.waiting.set(name, left);
    return batch;
  }

  private async send(batch: Waiting[]): Promise<void> {
    const statement = batch[0]!.row.statement;
    try {
      settle(batch, await runBatchStatement(this.pool, statement, batch.map((waiting) => waiting.row)));
    } catch (error) {
      if (batch.length === 1 || !(error instanceof pg.DatabaseError)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      // The server refused the statement as a whole, so nothing of it was written: each row again alone.
      await Promise.all(
        batch.map((waiting) =>
          runBatchStatement(this.pool, statement, [waiting.row]).then(
            (rows) => settle([waiting], rows),
            (alone: unknown) => waiting.reject(alone),
          ),
        ),
      );
    }
  }
}

function settle(batch: Waiting[], rows: Map<string, unknown>): void {
  for (const waiting of batch) waiting.resolve(rows.get(waiting.row.sessionId));
}

/**
 * Runs one statement of rows (of distinct sessions) and returns the rows it returned by their session
 * id column (`statement.key`): a session without a row was refused and nothing of its write was applied.
 */
export async function runBatchStatement(pool: pg.Pool, statement: BatchStatement, rows: readonly BatchedRow[]): Promise<Map<string, unknown>> {
  // In session id order, so statements locking several of the same rows lock them in one order.
  const ordered = rows.length > 1 ? [...rows].sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0)) : rows;
  const records = `[${ordered.map((row) => row.record).join(',')}]`;
  // A server's error response leaves the connection idle (the statement was all there was to roll
  // back), so it is kept: a producer's retried accept, failing on its input id, costs no reconnect.
  const result = await withConnection(
    pool,
    (client) => client.query({ name: statement.name, text: statement.text, values: [records] }),
    (error) => error instanceof pg.DatabaseError,
  );
  const key = statement.key ?? 'sessionId';
  const bySession = new Map<string, unknown>();
  for (const row of result.rows as Record<string, unknown>[]) {
    const sessionId = row[key];
    if (typeof sessionId === 'string') bySession.set(sessionId, row);
  }
  return bySession;
}

function positiveInteger(value: number, what: string): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new ConfigInvalidError(`write batch ${what} must be a positive integer`, { details: { received: String(value) } });
}
