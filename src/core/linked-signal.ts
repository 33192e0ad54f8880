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
 * (bench/RESULTS.md).
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
 * Iterates what `follow` yields under a signal that ends with `closed` or, when given, `own` — a
 * subscription of a long-lived client ended by the client's close or the caller — linked when the
 * iteration starts and unlinked when it ends, whatever ends it.
 */
export async function* whileLinked<T>(
  closed: AbortSignal,
  own: AbortSignal | undefined,
  follow: (signal: AbortSignal) => AsyncIterable<T>,
): AsyncGenerator<T, void, undefined> {
  if (own === undefined) return yield* follow(closed);
  const linked = linkedSignal([closed, own]);
  try {
    yield* follow(linked.signal);
  } finally {
    linked.dispose();
  }
}
