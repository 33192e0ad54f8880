/**
 * Entry of the child process `startStandardOpenAiServerProcess` spawns: runs the bench's fake OpenAI
 * server (`startStandardOpenAiServer`, the same code the in-process benches use) on its own event loop,
 * as a remote model would be. Protocol (`bench-child.ts`): ready with `{"url":"http://127.0.0.1:<port>/v1"}`;
 * requests:
 * - `"requests"`: the count of requests served so far; `"peakInFlight"`: the most open at once;
 * - `{"watch":<pid>}`: the process whose CPU the hold's marks read (a worker process);
 * - `"held"`: the hold's marks, `{ from, to }` — each `{ t, cpuMs }` (`CLOCK_MONOTONIC` ms, and the
 *   watched process's CPU read at that moment) or null: `from` when the last held first call arrived,
 *   `to` when the first held call's answer was written.
 * Options come as its one JSON argument (`StandardOpenAiServerOptions`: `{"delayMs":…,"holdFirstCalls":…}`).
 * It closes its server and exits when its stdin ends.
 */
import { serveBenchChild } from './bench-child.js';
import { startStandardOpenAiServer, type StandardOpenAiServerOptions } from './fleet.js';
import type { HoldMark } from './openai-fake-process.js';
import { processCpuMs } from './process-cpu.js';
import { monotonicMs } from './stats.js';

const options = JSON.parse(process.argv[2] ?? '{}') as StandardOpenAiServerOptions;
let watched: number | null = null;
const marks: { from: HoldMark | null; to: HoldMark | null } = { from: null, to: null };
const mark = (): HoldMark => ({ t: monotonicMs(), cpuMs: watched === null ? null : processCpuMs(watched) });
const server = await startStandardOpenAiServer(options, {
  onHoldReleased: () => (marks.from = mark()),
  onFirstHeldAnswered: () => (marks.to = mark()),
});
serveBenchChild<unknown>({
  ready: { url: server.url },
  handle: async (request) => {
    if (request === 'requests') return server.requests();
    if (request === 'peakInFlight') return server.peakInFlight();
    if (request === 'held') return marks;
    if (typeof request === 'object' && request !== null && Number.isInteger((request as { watch?: unknown }).watch)) {
      watched = (request as { watch: number }).watch;
      return true;
    }
    throw new Error(`unknown request ${JSON.stringify(request)}`);
  },
  close: server.close,
});
