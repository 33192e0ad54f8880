import pg from 'pg';
import { ConfigInvalidError } from '../core/errors/index.js';
import type { CommitStepStatement } from './sql/commit-step.js';

/** How steps of different sessions are grouped into one statement (cross-session group commit). */
export interface StepBatchOptions {
  /** Most steps one statement carries. Default 64. */
  maxSize?: number;
  /**
   * Most step statements running at once. Steps that become ready meanwhile wait for one of them to
   * finish and then go together, so a busy worker writes many steps per statement and per WAL flush,
   * while an idle one sends each step at once. Default 2.
   */
  maxInFlight?: number;
}

/** A step ready to be written: its statement variant and its record in the statement's `$1`. */
export interface BatchedStep {
  statement: CommitStepStatement;
  sessionId: string;
  /** The step's record as JSON text (one element of the `$1` array). */
  record: string;
}

interface Waiting {
  step: BatchedStep;
  /** Submission order, to send the oldest waiting step's variant first. */
  order: number;
  /** The row the statement returned for this step's session, or undefined: the step was refused. */
  resolve: (row: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit across sessions (DESIGN.md §9). `submit` queues a step by statement variant; at the
 * end of the current turn of the event loop, and whenever a statement finishes, the waiting steps of
 * a variant are sent as one statement — as many as {@link StepBatchOptions.maxInFlight} allows, each
 * of at most `maxSize` steps, never two steps of one session in one statement (a session's second
 * step waits for the next). Each step's fence is its own row's: a refused step resolves undefined and
 * the others apply.
 *
 * A statement the server fails (an error response: it rolled back and wrote nothing) is sent again
 * one step per statement, so one step's error is only its own. Any other failure — a lost
 * connection, when whether the statement committed is unknown — rejects every step of the batch, as
 * it would reject a lone step: retrying could apply a step twice.
 */
export class StepBatcher {
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly maxSize: number;
  private readonly maxInFlight: number;
  private inFlight = 0;
  private submitted = 0;
  private flushScheduled = false;

  constructor(
    private readonly pool: pg.Pool,
    options: StepBatchOptions = {},
  ) {
    this.maxSize = positiveInteger(options.maxSize ?? 64, 'maxSize');
    this.maxInFlight = positiveInteger(options.maxInFlight ?? 2, 'maxInFlight');
  }

  /** Writes the step with others ready now; resolves the statement's row for it, or undefined if refused. */
  submit(step: BatchedStep): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(step.statement.name);
      const waiting: Waiting = { step, order: this.submitted++, resolve, reject };
      if (queue === undefined) this.waiting.set(step.statement.name, [waiting]);
      else queue.push(waiting);
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After the current turn: every step that becomes ready in it joins the same statement.
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

  /** Up to `maxSize` waiting steps of the variant waiting longest, at most one per session. */
  private takeOldest(): Waiting[] | undefined {
    let oldest: Waiting[] | undefined;
    for (const queue of this.waiting.values()) {
      if (oldest === undefined || queue[0]!.order < oldest[0]!.order) oldest = queue;
    }
    if (oldest === undefined) return undefined;
    const name = oldest[0]!.step.statement.name;
    const batch: Waiting[] = [];
    const left: Waiting[] = [];
    const sessions = new Set<string>();
    for (const waiting of oldest) {
      if (batch.length < this.maxSize && !sessions.has(waiting.step.sessionId)) {
        sessions.add(waiting.step.sessionId);
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
    const statement = batch[0]!.step.statement;
    try {
      settle(batch, await runStepStatement(this.pool, statement, batch.map((waiting) => waiting.step)));
    } catch (error) {
      if (batch.length === 1 || !(error instanceof pg.DatabaseError)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      // The server refused the statement as a whole, so nothing of it was written: each step again alone.
      await Promise.all(
        batch.map((waiting) =>
          runStepStatement(this.pool, statement, [waiting.step]).then(
            (rows) => settle([waiting], rows),
            (alone: unknown) => waiting.reject(alone),
          ),
        ),
      );
    }
  }
}

function settle(batch: Waiting[], rows: Map<string, unknown>): void {
  for (const waiting of batch) waiting.resolve(rows.get(waiting.step.sessionId));
}

/**
 * Runs one statement of steps (of distinct sessions, all of the statement's variant) and returns the
 * rows it returned by session id: a step without a row was refused and wrote nothing.
 */
export async function runStepStatement(pool: pg.Pool, statement: CommitStepStatement, steps: readonly BatchedStep[]): Promise<Map<string, unknown>> {
  const records = `[${steps.map((step) => step.record).join(',')}]`;
  const result = await pool.query({ name: statement.name, text: statement.text, values: [records] });
  const rows = new Map<string, unknown>();
  for (const row of result.rows as { sessionId?: unknown }[]) {
    if (typeof row.sessionId === 'string') rows.set(row.sessionId, row);
  }
  return rows;
}

function positiveInteger(value: number, what: string): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new ConfigInvalidError(`step batch ${what} must be a positive integer`, { details: { received: String(value) } });
}
