/**
 * Waits for `pending` to settle, but at most `ms` milliseconds. Resolves true when it settled in
 * time (fulfilled or rejected — the caller handles outcomes itself), false when the time ran out;
 * the work itself carries on in the background. Used where Redis may hang (a reconnecting client
 * queues commands without failing them) and the caller must not.
 */
export async function settleWithin(pending: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([pending.then(settled, settled), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

function settled(): true {
  return true;
}

/** What {@link attemptWithin} found: the value, or why there is none. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; timedOut: boolean; error: unknown };

/** Like {@link settleWithin}, but hands back the outcome instead of throwing it. */
export async function attemptWithin<T>(pending: Promise<T>, ms: number): Promise<Attempt<T>> {
  const outcome = pending.then(
    (value): Attempt<T> => ({ ok: true, value }),
    (error: unknown): Attempt<T> => ({ ok: false, timedOut: false, error }),
  );
  if (await settleWithin(outcome, ms)) return outcome;
  return { ok: false, timedOut: true, error: new Error(`no answer within ${ms} ms`) };
}
