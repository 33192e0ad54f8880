import type { Redis } from 'ioredis';

/**
 * A connection owned by one blocking reader: opened with `duplicate()`, abandoned mid-command when
 * the reader's signal aborts, and always closed when the reader ends.
 */

/** Thrown by {@link untilAborted} when the signal fires first; the caller ends quietly. */
export class ReadAborted extends Error {
  constructor() {
    super('read aborted');
    this.name = 'ReadAborted';
  }
}

/**
 * Waits for `pending` unless `signal` aborts first. Needed besides disconnecting: a command that
 * ioredis holds in its offline queue while reconnecting is never rejected by `disconnect()`.
 */
export function untilAborted<T>(pending: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return pending;
  // The abandoned command may still reject later; nobody is listening for it any more.
  pending.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new ReadAborted());
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Closes a connection without throwing: QUIT when it is usable (a clean goodbye), otherwise drop the
 * socket. Resolves once the socket is gone, so a test's open-handle check finds nothing left.
 */
export async function closeConnection(redis: Redis): Promise<void> {
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
