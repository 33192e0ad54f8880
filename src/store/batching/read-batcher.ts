import type pg from 'pg';
import { StateCorruptError } from '../../core/errors/index.js';
import { BatchQueue, type BatchOptions } from './batch-queue.js';
import { isStatementError, withConnection } from '../postgres/connection.js';

/** What every batched read names: the session it reads (an id that passed `assertSessionId`). */
export interface SessionRead {
  sessionId: string;
}

/**
 * A kind of hot read that the reads of different sessions share. Its statements answer any number of
 * reads at once (`WHERE session_id IN (…)`), so a round trip costs the server one parse, one plan and
 * one scan per statement, however many sessions it carries.
 */
export interface ReadKind<P extends SessionRead> {
  /** Reads whose kinds have the same key are answered by the same statements. */
  readonly key: string;
  /** How many statements (and so results) `sql` has. */
  readonly statements: number;
  /**
   * The statements answering these reads — of distinct sessions — as simple-protocol SQL, with the
   * validated values inlined and quoted. Every row they return names its session in `sessionId`.
   */
  sql(reads: readonly P[]): string;
}

/** A read waiting for its round trip. */
export interface BatchedRead<P extends SessionRead = SessionRead> {
  kind: ReadKind<P>;
  params: P;
}

/** A read's answer: for each statement of its kind, the rows of its session, in the statement's order. */
export type ReadRows = unknown[][];

/**
 * Reads of different sessions in one round trip (docs/store.md): the hot reads — a
 * run's state at its start, the inbox after a final reply — that are waiting at the end of a turn of
 * the event loop are sent, oldest first, as one simple query in which each kind of read has its
 * statements once, for all the sessions, and each read gets back its own session's rows. One read per
 * session and kind per round trip (a second waits for the next), so a row's `sessionId` names its
 * read. Failures are handled as {@link BatchQueue} says (reads write nothing; after a server error
 * each read is sent again alone).
 */
export class ReadBatcher {
  private readonly queue: BatchQueue<BatchedRead, ReadRows>;

  constructor(pool: pg.Pool, options: BatchOptions = {}) {
    this.queue = new BatchQueue(options, 'read', (reads) => runReads(pool, reads), firstReads);
  }

  /** Runs the read with others ready now; resolves its own session's rows, per statement. */
  submit<P extends SessionRead>(kind: ReadKind<P>, params: P): Promise<ReadRows> {
    return this.queue.submit({ kind: kind as unknown as ReadKind<SessionRead>, params });
  }
}

/** The oldest waiting reads, at most `maxSize`, one per session and kind. */
function firstReads(waiting: readonly BatchedRead[], maxSize: number): Set<number> {
  const chosen = new Set<number>();
  const taken = new Set<string>();
  for (const [index, read] of waiting.entries()) {
    if (chosen.size === maxSize) break;
    const key = `${read.kind.key}\u0000${read.params.sessionId}`;
    if (taken.has(key)) continue;
    taken.add(key);
    chosen.add(index);
  }
  return chosen;
}

/**
 * Sends the reads (at most one per session and kind) as one simple query and hands each read its
 * session's rows of every statement of its kind.
 */
export async function runReads(pool: pg.Pool, reads: readonly BatchedRead[]): Promise<ReadRows[]> {
  const groups = new Map<string, { kind: ReadKind<SessionRead>; members: number[] }>();
  reads.forEach((read, index) => {
    const group = groups.get(read.kind.key);
    if (group === undefined) groups.set(read.kind.key, { kind: read.kind, members: [index] });
    else group.members.push(index);
  });
  const text = [...groups.values()].map(({ kind, members }) => kind.sql(members.map((index) => reads[index]!.params))).join(';\n');
  const expected = [...groups.values()].reduce((sum, { kind }) => sum + kind.statements, 0);
  const sent = await withConnection(
    pool,
    (client) => client.query(text),
    isStatementError,
  );
  // pg returns one result for one statement and an array for several.
  const results = (Array.isArray(sent) ? sent : [sent]) as pg.QueryResult[];
  if (results.length !== expected) {
    throw new StateCorruptError(`batched reads: expected ${expected} results, got ${results.length}`, { details: { expected, received: results.length } });
  }
  const answers: ReadRows[] = reads.map(() => []);
  let next = 0;
  for (const { kind, members } of groups.values()) {
    for (let statement = 0; statement < kind.statements; statement += 1) {
      const bySession = rowsBySession(results[next]!.rows, kind.key);
      next += 1;
      for (const index of members) answers[index]!.push(bySession.get(reads[index]!.params.sessionId) ?? []);
    }
  }
  return answers;
}

function rowsBySession(rows: readonly unknown[], kind: string): Map<string, unknown[]> {
  const bySession = new Map<string, unknown[]>();
  for (const row of rows) {
    const sessionId = (row as { sessionId?: unknown } | null)?.sessionId;
    if (typeof sessionId !== 'string') throw new StateCorruptError(`batched read ${kind}: a row without its sessionId`, { details: { kind } });
    const list = bySession.get(sessionId);
    if (list === undefined) bySession.set(sessionId, [row]);
    else list.push(row);
  }
  return bySession;
}
