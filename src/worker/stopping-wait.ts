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

/** A wait {@link boundWhileStopping} watches: how to cut it short, and its timer once armed. */
interface Waiter {
  cutShort(): void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The waits of one worker, watched through one listener on each of its signals (not two per wait:
 * an `AbortSignal` finds a listener to remove by walking its list, and the drains of a busy worker
 * wait on Redis all the time).
 */
class StopGate {
  readonly waiters = new Set<Waiter>();

  constructor(private readonly signals: StopSignals) {
    signals.stopping.addEventListener('abort', () => this.waiters.forEach((waiter) => this.startClock(waiter)), { once: true });
    signals.shutdown.addEventListener('abort', () => this.waiters.forEach((waiter) => arm(waiter, 0)), { once: true });
  }

  /** Arms the waiter's clock as the signals say: none while running, the stopping bound, or at once when forced. */
  watch(waiter: Waiter): void {
    this.waiters.add(waiter);
    if (this.signals.shutdown.aborted) arm(waiter, 0);
    else if (this.signals.stopping.aborted) this.startClock(waiter);
  }

  release(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
  }

  private startClock(waiter: Waiter): void {
    if (waiter.timer === undefined) arm(waiter, STOPPING_REDIS_WAIT_MS);
  }
}

// A timer, not a synchronous cut: a wait that is already settled keeps its value.
function arm(waiter: Waiter, ms: number): void {
  clearTimeout(waiter.timer);
  waiter.timer = setTimeout(() => waiter.cutShort(), ms);
}

const gates = new WeakMap<AbortSignal, StopGate>();

function gateOf(signals: StopSignals): StopGate {
  let gate = gates.get(signals.stopping);
  if (gate === undefined) {
    gate = new StopGate(signals);
    gates.set(signals.stopping, gate);
  }
  return gate;
}

/**
 * `pending`, unchanged while the worker runs (the graceful path waits as before). Once it
 * is stopping, the wait gets {@link STOPPING_REDIS_WAIT_MS} from then (or from its start, if later);
 * once the stop is forced, none. Past that it rejects with {@link StoppingWaitCutShortError}.
 */
export function boundWhileStopping<T>(signals: StopSignals, pending: Promise<T>, what: string): Promise<T> {
  const gate = gateOf(signals);
  return new Promise<T>((resolve, reject) => {
    const waiter: Waiter = {
      timer: undefined,
      cutShort: () => {
        gate.release(waiter);
        reject(new StoppingWaitCutShortError(`${what}: Redis did not answer while the worker was stopping; given up so the drain can release its lease`));
      },
    };
    pending.then(
      (value) => {
        gate.release(waiter);
        resolve(value);
      },
      (error: unknown) => {
        gate.release(waiter);
        reject(error);
      },
    );
    gate.watch(waiter);
  });
}
