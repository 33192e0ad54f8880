import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CancelledError, InputInvalidError, isLoopfleetError } from '../core/errors/index.js';
import type { SessionStore } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import { lastEventId, readSessionEvents } from '../events/event-subscriber.js';
import { FROM_START } from '../events/stream-id.js';
import { abortableDelay } from './abortable-delay.js';
import { outcomeFromEvent, type InputOutcome } from './input-outcome.js';
import { assertInputSeq, readSettledOutcome } from './read-outcome.js';
import { ResultTimeoutError } from './result-timeout-error.js';
import { SettleOnce } from './settle-once.js';
import { attemptWithin } from './settle-within.js';
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
  store: SessionStore;
  redis: Redis;
  queueName: string;
  /** How often the Postgres copy is re-read while waiting on the stream, in milliseconds. */
  recheckMs: number;
  /** Longest wait for the stream's last id before going on without the stream, in milliseconds. */
  redisTimeoutMs: number;
  logger: Logger | null;
  /** Aborts when the queue closes: every wait ends with `cancelled`. */
  closed: AbortSignal;
}

/**
 * Resolves with an input's terminal outcome (DESIGN.md §4.1, I6, I7), without a race between
 * "already finished" and "about to finish": the stream's last id is taken FIRST, then Postgres is
 * read — the worker commits the outcome before it publishes `input_finished`, so if the row is not
 * settled yet, the event comes after that id. While waiting on the stream, Postgres is re-read every
 * `recheckMs` and at once on a gap, because the event may never arrive (Redis lost it); when Redis is
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
  // Armed before the first read: the timeout and the signals bound the whole wait, also a stream
  // cursor held by a reconnecting Redis or a first Postgres read that takes its statement timeout.
  signal?.addEventListener('abort', onAbort, { once: true });
  deps.closed.addEventListener('abort', onClose, { once: true });
  if (deps.closed.aborted) onClose();
  const timer = timeoutMs === undefined ? null : setTimeout(() => outcome.reject(new ResultTimeoutError(id, inputSeq, timeoutMs)), timeoutMs);
  const target = { deps, sessionId: id, seq: inputSeq, outcome, signal: stop.signal };
  const watchers: Promise<void>[] = [];
  void (async () => {
    // The cursor first, then Postgres: an outcome not settled in that read is published after the cursor.
    const cursor = await streamCursor(deps, id);
    if (stop.signal.aborted) return;
    await checkStore(target);
    if (stop.signal.aborted || outcome.settled) return;
    watchers.push(watchStream(target, cursor), pollStore(target));
  })().catch((error: unknown) => outcome.reject(error));
  try {
    return await outcome.promise;
  } finally {
    if (timer !== null) clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    deps.closed.removeEventListener('abort', onClose);
    stop.abort();
    // Nothing keeps running once the caller has its answer: the stream reader's connection is closed.
    await Promise.allSettled(watchers);
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

/** The id to read the stream after, or null when Redis cannot be reached (then only Postgres is polled). */
async function streamCursor(deps: ResultDeps, sessionId: string): Promise<string | null> {
  // Bounded: while Redis is down a reconnecting client holds the command instead of failing it.
  const last = await attemptWithin(lastEventId(deps.redis, deps.queueName, sessionId), deps.redisTimeoutMs);
  if (last.ok) return last.value ?? FROM_START;
  deps.logger?.warn({ err: last.error, sessionId }, 'event stream unreachable; waiting for the result on Postgres alone');
  return null;
}

/** Follows the stream for this input's `input_finished`; a gap or an unreadable event defers to Postgres. */
async function watchStream(target: WaitTarget, cursor: string | null): Promise<void> {
  if (cursor === null) return;
  const { deps, sessionId, seq } = target;
  try {
    const items = readSessionEvents(deps.redis, { queueName: deps.queueName, sessionId, after: cursor, signal: target.signal, blockMs: deps.recheckMs });
    for await (const item of items) {
      if (item.kind === 'gap') {
        await checkStore(target);
      } else if (item.type === 'input_finished' && item.data.inputSeq === seq) {
        const fromEvent = outcomeFromEvent(item);
        if (fromEvent !== null) target.outcome.resolve(fromEvent);
        else await checkStore(target);
      }
      if (target.outcome.settled) return;
    }
  } catch (error) {
    // The Postgres poll carries on alone: slower, never wrong.
    deps.logger?.warn({ err: error, sessionId, seq }, 'event stream failed while waiting for a result');
  }
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
