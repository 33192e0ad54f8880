import { loadConfig } from '../../config/index.js';
import type { Logger } from 'pino';
import { loggerFromConfig } from '../../observability/logger.js';
import { applyHeapGrowth } from '../../worker/heap-growth.js';
import { startWorker } from '../../worker/start-worker.js';
import { maxSemiSpaceMb } from '../../worker/young-generation.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';
import { parseDuration } from '../duration.js';
import { FORCED_EXIT_MS, WORKER_GRACE_MS } from '../limits.js';

export { FORCED_EXIT_MS, WORKER_GRACE_MS };


/**
 * `loopfleet worker [--grace <ms>]`: runs a worker until SIGTERM/SIGINT. The first signal stops
 * taking work and lets running inputs finish for up to the grace period (default 30 s); a second
 * signal, or the end of the grace period, aborts them — their sessions are handed to other workers.
 * After a second signal the process exits 1 if the close still has not finished {@link FORCED_EXIT_MS} later.
 */
export async function workerCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandLine({ args, options: { grace: { type: 'string', default: '30s' }, json: { type: 'boolean', default: false } } });
  const graceMs = parseDuration('grace', values.grace, WORKER_GRACE_MS);
  // --json: the logs as JSON lines, whatever LOG_FORMAT says.
  const config = loadConfig(values.json ? Object.assign({}, io.env, { LOG_FORMAT: 'json' }) : io.env);
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


function exitUnclosed(logger: Logger): void {
  logger.error({ waitedMs: FORCED_EXIT_MS }, 'worker did not close after a second signal; exiting');
  process.exit(EXIT.failure);
}
