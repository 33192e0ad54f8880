import { loadConfig } from '../../config/index.js';
import { loggerFromConfig } from '../../observability/logger.js';
import { applyHeapGrowth } from '../../worker/heap-growth.js';
import { startWorker } from '../../worker/start-worker.js';
import { maxSemiSpaceMb } from '../../worker/young-generation.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine, parseIntegerOption } from '../command-line.js';
import { MAX_TIMER_MS } from '../../core/ports/clock.js';

/** Accepted `--grace` values: past Node's timer maximum (2^31-1 ms) setTimeout would fire at once. */
export const WORKER_GRACE_MS = { min: 0, max: MAX_TIMER_MS, unit: 'ms' } as const;

/**
 * `loopfleet worker [--grace <ms>]`: runs a worker until SIGTERM/SIGINT. The first signal stops
 * taking work and lets running inputs finish for up to the grace period (default 30 s); a second
 * signal, or the end of the grace period, aborts them — their sessions are handed to other workers.
 */
export async function workerCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandLine({ args, options: { grace: { type: 'string', default: '30000' } } });
  const graceMs = parseIntegerOption('grace', values.grace, WORKER_GRACE_MS);
  const config = loadConfig(io.env);
  const logger = loggerFromConfig(config);
  // The process is the worker's own: its GC may favour a bounded heap (src/worker/heap-growth.ts).
  logger.info({ heapGrowth: applyHeapGrowth(config.worker.heapGrowthPercent) }, 'V8 heap growth');
  // Node's flag, read as V8 set up the heap: null is V8's default (src/worker/young-generation.ts).
  logger.info({ maxSemiSpaceMb: maxSemiSpaceMb() }, 'V8 young generation');
  const worker = await startWorker(config, { logger });
  await new Promise<void>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals += 1;
      logger.info({ signal, graceMs: signals === 1 ? graceMs : 0 }, signals === 1 ? 'shutting down' : 'forced shutdown');
      void worker.close({ graceMs, force: signals > 1 }).then(resolve);
      if (signals > 1) void worker.close({ force: true });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  return EXIT.ok;
}
