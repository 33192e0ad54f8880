import { loadConfig } from '../../config/index.js';
import type { Logger } from 'pino';
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
 * After a second signal the process exits 1 if the close still has not finished {@link FORCED_EXIT_MS} later.
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
  // A failed start closes what it opened and rejects: the command fails, and the process exits.
  const worker = await startWorker(config, { logger });
  return new Promise<number>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals += 1;
      const forced = signals > 1;
      logger.info({ signal, graceMs: forced ? 0 : graceMs }, forced ? 'forced shutdown' : 'shutting down');
      // The close is bounded once forced; should it still hang (a step that never settles), the
      // process must not: an operator's second signal means stop now. Unref'd: a finished close exits first.
      if (forced) setTimeout(() => exitUnclosed(logger), FORCED_EXIT_MS).unref();
      // The same close each time; a second call forces it.
      worker.close({ graceMs, force: forced }).then(
        () => resolve(EXIT.ok),
        (error: unknown) => {
          logger.error({ err: error }, 'worker close failed');
          resolve(EXIT.failure);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * After a second signal, how long the forced close may take before the process exits anyway (code 1),
 * ms: longer than the close's own bounds (`FORCED_CLOSE_WAIT_MS` twice, plus its Redis steps).
 */
export const FORCED_EXIT_MS = 12_000;

function exitUnclosed(logger: Logger): void {
  logger.error({ waitedMs: FORCED_EXIT_MS }, 'worker did not close after a second signal; exiting');
  process.exit(EXIT.failure);
}
