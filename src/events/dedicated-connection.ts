import type { RedisConnection } from '../fleet/redis-connection.js';

/**
 * A connection owned by one blocking reader: opened with `duplicate()`, abandoned mid-command when
 * the reader's signal aborts, and always closed when the reader ends.
 */

/** Thrown by {@link AbortableReads.read} when the signal fires first; the caller ends quietly. */
export class ReadAborted extends Error {
  constructor() {
    super('read aborted');
    this.name = 'ReadAborted';
  }
}

/**
 * The reads of one blocking reader, abandoned at once when its signal aborts. Needed besides
 * disconnecting: a command that ioredis holds in its offline queue while reconnecting is never
 * rejected by `disconnect()`.
 *
 * One abort listener serves the reader's whole life, not one per read: a signal many readers share
 * (a server's shutdown signal given to every subscription) keeps its listeners in a list that each
 * add and remove walks, so a listener per read made every read cost in proportion to the readers
 * (bench/history/log-to-session-30.md, item 51). Call {@link dispose} when the reader ends.
 */
export class AbortableReads {
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort: () => void;
  /** Rejects the read in progress; a settled read's is left here, and calling it again does nothing. */
  #abandon: ((error: ReadAborted) => void) | null = null;

  /** `onAbort` runs once, first, when the signal aborts (e.g. to drop the reader's connection). */
  constructor(signal: AbortSignal | undefined, onAbort: () => void = () => {}) {
    this.#signal = signal;
    this.#onAbort = () => {
      onAbort();
      this.#abandon?.(new ReadAborted());
    };
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Waits for `pending` unless the signal aborts first, which rejects with {@link ReadAborted}. */
  read<T>(pending: Promise<T>): Promise<T> {
    if (this.#signal === undefined) return pending;
    // The abandoned command may still reject later; nobody is listening for it any more.
    pending.catch(() => {});
    if (this.#signal.aborted) return Promise.reject(new ReadAborted());
    return new Promise<T>((resolve, reject) => {
      this.#abandon = reject;
      pending.then(resolve, reject);
    });
  }

  /** Stops listening to the signal (idempotent). */
  dispose(): void {
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#abandon = null;
  }
}

/**
 * Closes a connection without throwing: QUIT when it is usable (a clean goodbye), otherwise drop the
 * socket. Resolves once the socket is gone, so a test's open-handle check finds nothing left.
 */
export async function closeConnection(redis: RedisConnection): Promise<void> {
  const status = redis.status;
  if (status === 'end') return;
  if (status === 'wait' || status === 'reconnecting' || status === 'close') {
    // No socket is open in these states, and ioredis emits no further 'end' for them.
    redis.disconnect();
    return;
  }
  const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
  if (status === 'ready') {
    await redis.quit().catch(() => redis.disconnect());
  } else {
    redis.disconnect();
  }
  await ended;
}
