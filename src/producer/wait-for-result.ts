import type { Logger } from 'pino';
import { CancelledError, InputInvalidError, isLoopfleetError } from '../core/errors/index.js';
import type { ClientStore } from '../core/ports/client-store.js';
import { assertSessionId } from '../fleet/session-id.js';
import { abortableDelay } from './abortable-delay.js';
import type { FinishNotices } from './finish-notices.js';
import type { InputOutcome } from './input-outcome.js';
import { assertInputSeq, readSettledOutcome } from './read-outcome.js';
import { ResultTimeoutError } from './result-timeout-error.js';
import { SettleOnce } from './settle-once.js';
import { attemptWithin } from '../fleet/settle-within.js';
import { MAX_TIMER_MS } from '../core/ports/clock.js';

/** Options of `result()`. */
export interface ResultOptions {
  /** Give up after this many milliseconds with a {@link ResultTimeoutError}. Default: wait as long as it takes. */
  timeoutMs?: number;
  /** Stop waiting when it aborts; `result()` then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** What waiting for a result needs from the queue. */
export interface ResultDeps {
  store: ClientStore;
  /** The queue's subscription to the sessions' finish announcements. */
  finishes: FinishNotices;
  /** How often Postgres is re-read while waiting for the announcement, in milliseconds. */
  recheckMs: number;
  /** Longest wait for the subscription before going on without it, in milliseconds. */
  redisTimeoutMs: number;
  logger: Logger | null;
  /** Aborts when the queue closes: every wait ends with `cancelled`. */
  closed: AbortSignal;
}

/**
 * Resolves with an input's terminal outcome (I6, I7), without a race between
 * "already finished" and "about to finish": the wait subscribes to the session's finish announcements
 * FIRST (`FinishNotices`), then reads Postgres — the worker commits the outcome before it publishes
 * `input_finished`, whose announcement the subscription then receives, so if the row is not settled
 * yet, the announcement is still to come. The outcome always comes from Postgres: an announcement
 * only makes the wait read the row at once, since anyone allowed to PUBLISH on the queue's Redis can
 * announce a made-up finish (docs/invariants.md, S3). While waiting, Postgres is also re-read every
 * `recheckMs`, and at once when the subscription's connection comes back from a drop, because an
 * announcement may never arrive (Redis lost it, or an older worker made none); when Redis is
 * unreachable the wait is Postgres polling alone.
 */
export async function waitForResult(deps: ResultDeps, sessionId: string, seq: number, options: ResultOptions = {}): Promise<InputOutcome> {
  const id = assertSessionId(sessionId);
  const inputSeq = assertInputSeq(seq);
  const { timeoutMs, signal } = checkOptions(options);
  signal?.throwIfAborted();
  const outcome = new SettleOnce<InputOutcome>();
  const stop = new AbortController();
  const onAbort = (): void => outcome.reject(signal?.reason);
  const onClose = (): void => outcome.reject(new CancelledError('SessionQueue closed while waiting for a result'));
  // Armed before the first read: the timeout and the signals bound the whole wait, also a
  // subscription held by a reconnecting Redis or a first Postgres read that takes its statement timeout.
  signal?.addEventListener('abort', onAbort, { once: true });
  deps.closed.addEventListener('abort', onClose, { once: true });
  if (deps.closed.aborted) onClose();
  const timer = timeoutMs === undefined ? null : setTimeout(() => outcome.reject(new ResultTimeoutError(id, inputSeq, timeoutMs)), timeoutMs);
  const target = { deps, sessionId: id, seq: inputSeq, outcome, signal: stop.signal };
  const confirm = confirmingReads(target);
  const listening = deps.finishes.listen(id, {
    // A hint, not the answer: the announcement may be forged. Postgres says whether it finished.
    finished: (event) => {
      if (event.data.inputSeq === inputSeq && !outcome.settled) confirm.read();
    },
    resync: () => void checkStore(target),
  });
  let polling: Promise<void> | null = null;
  void (async () => {
    // The subscription first, then Postgres: an outcome not settled in that read is announced later.
    await subscribed(deps, id, listening.subscribed);
    if (stop.signal.aborted) return;
    await checkStore(target);
    if (stop.signal.aborted || outcome.settled) return;
    polling = pollStore(target);
  })().catch((error: unknown) => outcome.reject(error));
  try {
    return await outcome.promise;
  } finally {
    if (timer !== null) clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    deps.closed.removeEventListener('abort', onClose);
    stop.abort();
    listening.stop();
    // Nothing keeps running once the caller has its answer.
    await Promise.all([polling, confirm.done()]);
  }
}

interface WaitTarget {
  deps: ResultDeps;
  sessionId: string;
  seq: number;
  outcome: SettleOnce<InputOutcome>;
  signal: AbortSignal;
}

function checkOptions(options: ResultOptions): ResultOptions {
  if (typeof options !== 'object' || options === null) throw new InputInvalidError('result options must be an object');
  const { timeoutMs, signal } = options;
  if (timeoutMs !== undefined && !(Number.isSafeInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    throw new InputInvalidError(`timeoutMs must be an integer from 1 to ${MAX_TIMER_MS} (milliseconds), got ${String(timeoutMs)}`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InputInvalidError('signal must be an AbortSignal');
  return options;
}

/** Waits for the subscription, at most `redisTimeoutMs`; without it the wait goes on polling Postgres alone. */
async function subscribed(deps: ResultDeps, sessionId: string, subscription: Promise<void>): Promise<void> {
  // Bounded: while Redis is down a reconnecting client holds the command instead of failing it.
  const attempt = await attemptWithin(subscription, deps.redisTimeoutMs);
  if (!attempt.ok) deps.logger?.warn({ err: attempt.error, sessionId }, 'finish announcements unreachable; waiting for the result on Postgres alone');
}

/**
 * The reads announcements ask for, one at a time: announcements arriving while one is out (a flood of
 * forged ones included) make one more read once it answers — the real finish may have been committed
 * after that read began — not a read each.
 */
function confirmingReads(target: WaitTarget): { read(): void; done(): Promise<void> } {
  let out: Promise<void> | null = null;
  let again = false;
  const read = (): void => {
    if (out !== null) {
      again = true;
      return;
    }
    out = (async () => {
      do {
        again = false;
        await checkStore(target);
      } while (again && !target.outcome.settled && !target.signal.aborted);
    })().finally(() => {
      out = null;
    });
  };
  return { read, done: async () => out ?? undefined };
}

/** Re-reads Postgres every `recheckMs` until the outcome is settled one way or another. */
async function pollStore(target: WaitTarget): Promise<void> {
  while (!target.signal.aborted && !target.outcome.settled) {
    await abortableDelay(target.deps.recheckMs, target.signal);
    if (target.signal.aborted) return;
    await checkStore(target);
  }
}

/** One Postgres read: settles on an outcome, fails the wait when it can never succeed, shrugs off outages. */
async function checkStore(target: WaitTarget): Promise<void> {
  try {
    const found = await readSettledOutcome(target.deps.store, target.sessionId, target.seq);
    if (found !== null) target.outcome.resolve(found);
  } catch (error) {
    if (isLoopfleetError(error) && error.fault === 'input') {
      target.outcome.reject(error);
      return;
    }
    // The wait is over (its answer, its timeout, the queue closing): this read no longer matters.
    if (target.signal.aborted) return;
    target.deps.logger?.warn({ err: error, sessionId: target.sessionId, seq: target.seq }, 'reading the input from Postgres failed; retrying');
  }
}
