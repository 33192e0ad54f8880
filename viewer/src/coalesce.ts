/**
 * Wraps a reload so that bursts of triggers run it at most once at a time: a trigger while it runs
 * runs it once more afterwards, which picks up everything the burst asked for.
 */
export function coalesce(run: () => Promise<void>, delayMs = 60): () => void {
  let running = false;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const start = (): void => {
    timer = null;
    running = true;
    again = false;
    run()
      .catch(() => undefined)
      .finally(() => {
        running = false;
        if (again) trigger();
      });
  };
  function trigger(): void {
    if (running) {
      again = true;
      return;
    }
    if (timer === null) timer = setTimeout(start, delayMs);
  }
  return trigger;
}
