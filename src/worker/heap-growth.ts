/**
 * `WORKER_HEAP_GROWTH_PERCENT` (`WorkerConfig.heapGrowthPercent`), set on V8 by `loopfleet worker` as
 * it starts: how far the old generation may grow past what survived the last full collection before
 * the next one (V8's `--heap-growing-percent`).
 *
 * An input in flight keeps its objects — its run state, its request, the SDK's and the HTTP client's
 * — alive across its model call, so they are promoted to the old generation and become garbage there
 * when the input ends. Left to itself, V8 grows the old generation by up to 4× what survived when
 * collections are fast, so a worker with many inputs in flight reaches several times its live heap
 * before it collects: with 2,000 in flight through the OpenAI SDK the process peaked at 418–433 MB,
 * 320–342 MB with 100 % (bench/history/log-to-session-30.md, item 30), for 4–8 % more CPU in that run and 3–7 % fewer
 * inputs/s at full throughput.
 *
 * V8 reads the flag each time it sets the old generation's next limit, so setting it at run time takes
 * effect from the next full collection. It changes the whole process, which is why only the worker
 * command sets it, never `startWorker` (a host application embedding a worker keeps its own GC
 * settings). A `--heap-growing-percent` given to node itself wins: the setting is then left alone.
 */
import v8 from 'node:v8';

/** What {@link applyHeapGrowth} did. */
export type HeapGrowth =
  | { applied: true; percent: number }
  | { applied: false; reason: 'v8-default' }
  | { applied: false; reason: 'node-flag'; flag: string };

const NODE_FLAG = /^--heap[-_]growing[-_]percent(?:=|$)/;

/**
 * Sets `--heap-growing-percent` unless `percent` is 0 (V8's own factor) or node was given the flag.
 * Once per process, at start: 0 leaves the flag as it is, so it does not undo an earlier call.
 */
export function applyHeapGrowth(percent: number, execArgv: readonly string[] = process.execArgv): HeapGrowth {
  if (!Number.isInteger(percent) || percent < 0) throw new RangeError(`heap growth must be a non-negative integer percent (got ${String(percent)})`);
  const flag = execArgv.find((arg) => NODE_FLAG.test(arg));
  if (flag !== undefined) return { applied: false, reason: 'node-flag', flag };
  if (percent === 0) return { applied: false, reason: 'v8-default' };
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  return { applied: true, percent };
}
