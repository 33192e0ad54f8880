/** One turn of the event loop: whatever `setImmediate` queued before it has run. */
export const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Lets the event loop run until `condition` holds, failing after a bounded number of turns. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (condition()) return;
    await turn();
  }
  throw new Error(`never happened: ${what}`);
}
