import { InfrastructureError } from '../core/errors/index.js';

/**
 * Longest a drain waits on Redis once the worker is stopping, ms. While Redis is down the worker's
 * connections hold commands until they reconnect (they never fail them), so an unbounded wait would
 * keep the drain from its lease release — a Postgres write — and the lease keeper would renew the
 * lease for as long as Redis stays down: no other worker could take the session over.
 */
export const STOPPING_REDIS_WAIT_MS = 2_000;

/**
 * A wait on Redis given up because the worker is stopping. The command itself is not withdrawn: it
 * is still sent if the connection comes back before the worker closes it.
 */
export class StoppingWaitCutShortError extends InfrastructureError {}

/** The worker's shutdown signals (`WorkerContext.stopping`, `WorkerContext.shutdown`). */
export interface StopSignals {
  stopping: AbortSignal;
  shutdown: AbortSignal;
}

/**
 * `pending`, unchanged while the worker runs (STYLE.md 13: the graceful path waits as before). Once it
 * is stopping, the wait gets {@link STOPPING_REDIS_WAIT_MS} from then (or from its start, if later);
 * once the stop is forced, none. Past that it rejects with {@link StoppingWaitCutShortError}.
 */
export function boundWhileStopping<T>(signals: StopSignals, pending: Promise<T>, what: string): Promise<T> {
  const { stopping, shutdown } = signals;
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(timer);
      stopping.removeEventListener('abort', startClock);
      shutdown.removeEventListener('abort', cutNow);
    };
    const cutShort = (): void => {
      done();
      reject(new StoppingWaitCutShortError(`${what}: Redis did not answer while the worker was stopping; given up so the drain can release its lease`));
    };
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(cutShort, ms);
    };
    function startClock(): void {
      if (timer === undefined) arm(STOPPING_REDIS_WAIT_MS);
    }
    // A timer, not a synchronous cut: a wait that is already settled keeps its value.
    function cutNow(): void {
      arm(0);
    }
    pending.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
    if (shutdown.aborted) return cutNow();
    if (stopping.aborted) startClock();
    else stopping.addEventListener('abort', startClock, { once: true });
    shutdown.addEventListener('abort', cutNow, { once: true });
  });
}
