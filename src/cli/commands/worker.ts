import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/index.js';
import { loggerFromConfig } from '../../observability/logger.js';
import { applyHeapGrowth } from '../../worker/heap-growth.js';
import { startWorker } from '../../worker/start-worker.js';
import { maxSemiSpaceMb } from '../../worker/young-generation.js';
import { EXIT, type CliIo } from '../cli-io.js';

/**
 * `loopfleet worker [--grace <ms>]`: runs a worker until SIGTERM/SIGINT. The first signal stops
 * taking work and lets running inputs finish for up to the grace period (default 30 s); a second
 * signal, or the end of the grace period, aborts them — their sessions are handed to other workers.
 */
export async function workerCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { grace: { type: 'string', default: '30000' } }, strict: true });
  const graceMs = Number(values.grace);
  if (!Number.isInteger(graceMs) || graceMs < 0) {
    io.stderr(`loopfleet worker: --grace must be a non-negative integer (milliseconds)\n`);
    return EXIT.usage;
  }
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
