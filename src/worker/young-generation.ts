/**
 * The size of V8's young generation that `loopfleet worker` is started with: node's
 * `--max-semi-space-size` (MB per semi-space; V8's default on 64-bit Node 20 is 16).
 *
 * A worker allocates a few hundred kB per input, and every input in flight keeps its objects alive
 * across its model call, so each young collection copies about the same in-flight set whatever the
 * semi-space's size: a larger one collects less often for about the same copying each time, and
 * promotes less of what dies soon after. With 32 MB, the OpenAI-SDK throughput workload ran half the
 * young collections, paused 0.11–0.13 ms per input in them instead of 0.18–0.23, and its process used
 * 10–15 % less CPU; 2,000 inputs in flight peaked 45–50 MB higher (bench/history/log-to-session-30.md, item 49).
 *
 * Unlike `--heap-growing-percent` (src/worker/heap-growth.ts), V8 reads this flag only while it sets
 * up the heap, so the running process cannot set it: the worker is started with it (`npm run fleet`,
 * the compose file's `NODE_OPTIONS`), and logs what it runs with.
 */

/** The `--max-semi-space-size` the worker is started with where this project starts it, in MB. */
export const WORKER_SEMI_SPACE_MB = 32;

/** Node's flags that start a worker with {@link WORKER_SEMI_SPACE_MB}. */
export const WORKER_NODE_FLAGS: readonly string[] = [`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`];

/** Node takes V8's flags with `=` only (`--max-semi-space-size 32` is refused), dashes or underscores. */
const FLAG = /^--max[-_]semi[-_]space[-_]size=(.*)$/;

/**
 * The `--max-semi-space-size` this process was started with, in MB: from its command line, which
 * overrides `NODE_OPTIONS`, else from `NODE_OPTIONS`; the last one given wins. Null when neither sets
 * it (V8's default).
 */
export function maxSemiSpaceMb(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env['NODE_OPTIONS'] ?? ''): number | null {
  return lastValue(execArgv) ?? lastValue(nodeOptions.split(/\s+/));
}

function lastValue(args: readonly string[]): number | null {
  let value: number | null = null;
  for (const arg of args) {
    const text = FLAG.exec(arg)?.[1];
    const mb = Number(text);
    if (text !== undefined && text !== '' && Number.isFinite(mb) && mb > 0) value = mb;
  }
  return value;
}
