import pg from 'pg';
import { ConfigInvalidError } from '../../core/errors/index.js';

/** How many items one round trip carries, and how many such round trips run at once. */
export interface BatchOptions {
  /** Most items one round trip carries. Default 64; 1 turns batching off (and `maxInFlight` with it). */
  maxSize?: number;
  /**
   * Most round trips running at once. Items that become ready meanwhile wait for one of them to
   * finish and then go together, so a busy process sends many items per round trip while an idle one
   * sends each at once. Default 2.
   */
  maxInFlight?: number;
  /**
   * Beyond the first round trip in flight, another starts only while at least this many items wait
   * (of every kind together). Default 1: whenever any wait. A larger value keeps a lightly loaded
   * process at one round trip at a time, so its items share more of them, and still lets a busy one
   * overlap round trips.
   */
  overlapMinWaiting?: number;
}

/** A submitted item, waiting for its round trip. */
export interface Waiting<T, R> {
  item: T;
  resolve: (outcome: R) => void;
  reject: (error: unknown) => void;
}

/** Sends a batch and returns each item's outcome, in the batch's order. */
export type SendBatch<T, R> = (items: readonly T[]) => Promise<R[]>;

/** Picks the next batch among the waiting items (oldest first), at most `maxSize`; empty when none. */
export type SelectBatch<T> = (waiting: readonly T[], maxSize: number) => Set<number>;

/**
 * The queue both group-commit batchers run on (docs/store.md). Items submitted in one turn of the
 * event loop are sent together at its end, and whenever a round trip finishes the next batch goes:
 * at most `maxInFlight` at once, and a second or later one only while `overlapMinWaiting` items
 * wait. A batch the server fails (an error response — the round trip wrote nothing, and stopped at
 * the failing statement) is sent again one item per round trip, at most `maxInFlight` at a time, so
 * one item's error is only its own. Any other failure — a lost connection, when whether a write
 * committed is unknown — rejects every item of the batch, as it would reject a lone item: sending
 * again could apply a write twice.
 */
export class BatchQueue<T, R> {
  private waiting: Waiting<T, R>[] = [];
  private readonly maxSize: number;
  private readonly maxInFlight: number;
  private readonly overlapMinWaiting: number;
  private inFlight = 0;
  private flushScheduled = false;

  constructor(
    options: BatchOptions,
    what: string,
    private readonly send: SendBatch<T, R>,
    private readonly select: SelectBatch<T>,
  ) {
    this.maxSize = positiveInteger(options.maxSize ?? 64, `${what} maxSize`);
    this.maxInFlight = positiveInteger(options.maxInFlight ?? 2, `${what} maxInFlight`);
    this.overlapMinWaiting = positiveInteger(options.overlapMinWaiting ?? 1, `${what} overlapMinWaiting`);
  }

  submit(item: T): Promise<R> {
    // One item per round trip is batching turned off: each goes at once, as many at a time as the
    // pool allows, as a store without batching would send them.
    if (this.maxSize === 1) return this.send([item]).then((outcomes) => outcomes[0]!);
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After the current turn: every item that becomes ready in it joins the same round trip.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      // Another round trip beside a running one only when enough items wait to be worth it.
      if (this.inFlight > 0 && this.waiting.length < this.overlapMinWaiting) return;
      const chosen = this.select(
        this.waiting.map((waiting) => waiting.item),
        this.maxSize,
      );
      if (chosen.size === 0) return;
      const batch = this.waiting.filter((_, index) => chosen.has(index));
      this.waiting = this.waiting.filter((_, index) => !chosen.has(index));
      this.inFlight += 1;
      void this.dispatch(batch).finally(() => {
        this.inFlight -= 1;
        this.scheduleFlush();
      });
    }
  }

  private async dispatch(batch: Waiting<T, R>[]): Promise<void> {
    try {
      settle(batch, await this.send(batch.map((waiting) => waiting.item)));
    } catch (error) {
      if (batch.length === 1 || !(error instanceof pg.DatabaseError)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      // The server refused the round trip at one item, and nothing of it was kept: each item alone,
      // at most `maxInFlight` at a time. (A FATAL response — the server ending the connection, as
      // `pg_terminate_backend` does — rolled the statement back too; its connection was discarded,
      // so these go on others.) Each takes a pool connection: a batch's worth at once could take
      // them all and fail, on the pool's connection timeout, items it never sent.
      await eachAtMost(batch, this.maxInFlight, (waiting) =>
        this.send([waiting.item]).then(
          (outcomes) => settle([waiting], outcomes),
          (alone: unknown) => waiting.reject(alone),
        ),
      );
    }
  }
}

/** Runs `work` on every item, at most `limit` at once, and resolves when all have (`work` never rejects). */
async function eachAtMost<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next]!;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

function settle<T, R>(batch: Waiting<T, R>[], outcomes: R[]): void {
  batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
}

function positiveInteger(value: number, what: string): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new ConfigInvalidError(`batch ${what} must be a positive integer`, { details: { received: String(value) } });
}
