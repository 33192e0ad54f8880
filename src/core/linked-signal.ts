/** A signal that follows others, and can stop following them. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Removes its listeners from the sources (idempotent). Call when the work it guarded is over. */
  dispose(): void;
}

/**
 * An `AbortSignal` that aborts, with the same reason, as soon as any of `sources` does — what
 * `AbortSignal.any` gives — but whose links to the sources are removed by `dispose()`.
 * `AbortSignal.any` cannot be unlinked: every call leaves a weak reference in each source until the
 * collector clears it (and on Node 20 the entry itself stays: ≈ 60 bytes per call on the source for
 * good), and a worker calls it per drain and per run against long-lived sources (its shutdown
 * signal, a drain's lease keeper), a `SessionQueue` per subscription against its close signal.
 * Measured in isolation: ≈ 24 µs per `AbortSignal.any` against ≈ 1.3 µs to link and unlink
 * (bench/history/log-to-session-30.md, item 21).
 */
export function linkedSignal(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const already = sources.find((source) => source.aborted);
  if (already !== undefined) {
    controller.abort(already.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const onAbort = (event: Event): void => {
    dispose();
    controller.abort((event.target as AbortSignal).reason);
  };
  const dispose = (): void => {
    for (const source of sources) source.removeEventListener('abort', onAbort);
  };
  for (const source of sources) source.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, dispose };
}

/**
 * Iterates what `follow` yields under a signal that ends with any of `sources` (`undefined` ones
 * left out) — a subscription ended by its client's close or by the caller's signal — or with the
 * iterator's own `return()` or `throw()`; linked when the iteration starts and unlinked when it ends,
 * whatever ends it.
 *
 * `return()` does not wait for news: an async generator queues a `return()` behind a `next()` that
 * is still pending, so a follower waiting on a quiet stream would hold the caller's `return()` until
 * the stream's next event, and with it the follower's connection or subscription. A gateway that
 * pipes a subscription into a response (`Readable.from`) calls `return()` exactly then, when the
 * client goes away. Here `return()` (and `throw()`) made while a `next()` is pending first aborts the
 * iteration's signal: the wait ends, that `next()` resolves done, and the return settles with it.
 *
 * It is also `AsyncDisposable`: `await using events = queue.subscribe(id)` ends it like `return()`
 * when the scope is left, whether or not a loop over it started or finished.
 */
export function whileLinked<T>(
  sources: readonly (AbortSignal | undefined)[],
  follow: (signal: AbortSignal) => AsyncIterable<T>,
): LinkedIteration<T> {
  const stop = new AbortController();
  const iteration = (async function* linked(): AsyncGenerator<T, void, undefined> {
    const link = linkedSignal([...sources.filter((source) => source !== undefined), stop.signal]);
    try {
      yield* follow(link.signal);
    } finally {
      link.dispose();
    }
  })();
  let pending = 0;
  const settled = (): void => {
    pending -= 1;
  };
  const endWait = (): void => {
    if (pending > 0) stop.abort();
  };
  const iterator: LinkedIteration<T> = {
    next: () => {
      pending += 1;
      const step = iteration.next();
      step.then(settled, settled);
      return step;
    },
    return: (value) => {
      endWait();
      return iteration.return(value);
    },
    throw: (error: unknown) => {
      endWait();
      return iteration.throw(error);
    },
    [Symbol.asyncIterator]: () => iterator,
    [Symbol.asyncDispose]: async () => {
      await iterator.return(undefined);
    },
  };
  return iterator;
}

/** What {@link whileLinked} returns: an async generator that `await using` also ends. */
export type LinkedIteration<T> = AsyncGenerator<T, void, undefined> & AsyncDisposable;
