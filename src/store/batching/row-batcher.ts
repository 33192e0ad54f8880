import type pg from 'pg';
import { BatchQueue, type BatchOptions } from './batch-queue.js';
import { isStatementError, withConnection } from '../postgres/connection.js';

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

/**
 * Group commit across sessions (docs/store.md). `submit` queues a session's write; at
 * the end of the current turn of the event loop, and whenever a statement finishes, waiting rows of
 * one statement are sent together — the statement of the oldest waiting row first, at most
 * `maxSize` rows, never two rows of one session in one statement (a statement must not update a row
 * twice; the second waits for the next). The statements fence each row on its own: a refused row
 * resolves undefined and the others apply. Failures are handled as {@link BatchQueue} says.
 */
export class RowBatcher {
  private readonly queue: BatchQueue<BatchedRow, unknown>;

  constructor(pool: pg.Pool, options: BatchOptions = {}) {
    this.queue = new BatchQueue(options, 'write', (rows) => sendRows(pool, rows), selectRows);
  }

  /** Writes the row with others ready now; resolves the statement's row for its session, or undefined if refused. */
  submit(row: BatchedRow): Promise<unknown> {
    return this.queue.submit(row);
  }
}

/** The rows of one statement (all of the same one), and the row each got back (undefined: refused). */
async function sendRows(pool: pg.Pool, rows: readonly BatchedRow[]): Promise<unknown[]> {
  const returned = await runBatchStatement(pool, rows[0]!.statement, rows);
  return rows.map((row) => returned.get(row.sessionId));
}

/** The oldest waiting row's statement: its waiting rows in order, one per session, up to `maxSize`. */
function selectRows(waiting: readonly BatchedRow[], maxSize: number): Set<number> {
  const chosen = new Set<number>();
  const name = waiting[0]?.statement.name;
  const sessions = new Set<string>();
  for (const [index, row] of waiting.entries()) {
    if (chosen.size === maxSize) break;
    if (row.statement.name !== name || sessions.has(row.sessionId)) continue;
    sessions.add(row.sessionId);
    chosen.add(index);
  }
  return chosen;
}

/**
 * Runs one statement of rows (of distinct sessions) and returns the rows it returned by their session
 * id column (`statement.key`): a session without a row was refused and nothing of its write was applied.
 */
export async function runBatchStatement(pool: pg.Pool, statement: BatchStatement, rows: readonly BatchedRow[]): Promise<Map<string, unknown>> {
  // In session id order, the order every batched statement locks its sessions' rows in
  // (fencing/lock-sessions-sql.ts); a statement that fails anyway has its rows sent again one by one.
  const ordered = rows.length > 1 ? [...rows].sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0)) : rows;
  const records = `[${ordered.map((row) => row.record).join(',')}]`;
  // A server's error response leaves the connection idle (the statement was all there was to roll
  // back), so it is kept: a producer's retried accept, failing on its input id, costs no reconnect.
  // Not after a FATAL one: the server is closing that connection.
  const result = await withConnection(
    pool,
    (client) => client.query({ name: statement.name, text: statement.text, values: [records] }),
    isStatementError,
  );
  const key = statement.key ?? 'sessionId';
  const bySession = new Map<string, unknown>();
  for (const row of result.rows as Record<string, unknown>[]) {
    const sessionId = row[key];
    if (typeof sessionId === 'string') bySession.set(sessionId, row);
  }
  return bySession;
}
