/**
 * graphile-worker 0.17 (Node 20; 0.18 needs Node 22): a job per input, `queueName` = the session id,
 * which graphile-worker runs one job at a time, in order. The job runs the whole standard input (the
 * job is its unit of retry), history in `peer_history` through the worker's own pool
 * (`helpers.withPgClient`). Producer: `makeWorkerUtils().addJob`.
 */
import { Redis } from 'ioredis';
import { Logger, makeWorkerUtils, run, runMigrations, type Runner, type Task, type WorkerUtils } from 'graphile-worker';
import { appendHistory, createHistoryTable, loadHistory, verifyPgPeer } from '../lib/pg-history.js';
import { packageVersion } from '../lib/package-version.js';
import { runStandardInput } from '../lib/standard-loop.js';
import { InputEvents } from '../lib/standard.js';
import type { PeerContext, PeerSystem, StandardInput } from '../lib/system.js';

const TASK = 'standard_input';

const system: PeerSystem = {
  name: 'graphile-worker',
  versions: () => ({ 'graphile-worker': packageVersion('graphile-worker'), node: process.version }),
  // concurrentJobs, the poll interval and completion batching (its performance docs' knobs). The poll
  // matters although jobs are announced by LISTEN/NOTIFY: a session's next job becomes runnable when
  // the previous one completes and unlocks the session's queue, which notifies nobody, so an idle
  // worker only sees it at its next poll (2 s by default). `completeJobBatchDelay` batches
  // completions (fewer commits) but keeps the queue locked that much longer.
  // Not the local queue (`localQueue.size`, its docs' advice for throughput): its batch fetch takes
  // several jobs of one named queue at once and runs them side by side (0.17.3 `getJobs` with
  // batchSize > 1; graphile/worker#621, fix proposed in #622, unreleased), which breaks "one at a
  // time per session": measured here, jobs of a session overlapped, their history appends collided,
  // retried and ran out of order.
  sweep: [
    { concurrency: 16, pollInterval: 2000, completeJobBatchDelay: -1 },
    { concurrency: 32, pollInterval: 100, completeJobBatchDelay: -1 },
    { concurrency: 32, pollInterval: 100, completeJobBatchDelay: 1 },
    { concurrency: 48, pollInterval: 100, completeJobBatchDelay: -1 },
  ],
  async setup(ctx) {
    await runMigrations({ connectionString: ctx.pgUrl, logger: makeLogger() });
    await createHistoryTable(ctx.pgUrl);
    return { serverPids: [] };
  },
  async startWorker(ctx, model) {
    const redis = new Redis(ctx.redisUrl);
    const concurrency = Number(ctx.settings['concurrency'] ?? 32);
    const pollInterval = Number(ctx.settings['pollInterval'] ?? 2000);
    const completeJobBatchDelay = Number(ctx.settings['completeJobBatchDelay'] ?? -1);
    const task: Task = async (payload, helpers) => {
      const input = payload as StandardInput;
      const events = new InputEvents(redis, ctx.runId, input);
      await runStandardInput(model, events, input.text, {
        loadHistory: () => helpers.withPgClient((client) => loadHistory(client, input.sessionId)),
        step: (_name, fn) => fn(),
        appendHistory: (messages) => helpers.withPgClient((client) => appendHistory(client, input.sessionId, input.inputId, messages)),
      });
    };
    const runner: Runner = await run({
      connectionString: ctx.pgUrl,
      concurrency,
      noHandleSignals: true,
      pollInterval,
      taskList: { [TASK]: task },
      logger: makeLogger(),
      preset: {
        worker: {
          // Its docs' advice (concurrentJobs + 2), within the server's max_connections (100 here).
          maxPoolSize: Math.min(concurrency + 2, 50),
          completeJobBatchDelay,
        },
      },
    });
    return {
      async stop() {
        await runner.stop();
        redis.disconnect();
      },
    };
  },
  async createProducer(ctx: PeerContext) {
    const utils: WorkerUtils = await makeWorkerUtils({ connectionString: ctx.pgUrl, logger: makeLogger() });
    return {
      async add(input) {
        await utils.addJob(TASK, input, { queueName: input.sessionId, jobKey: input.inputId, jobKeyMode: 'preserve_run_at', maxAttempts: 25 });
      },
      async close() {
        await utils.release();
      },
    };
  },
  verify: verifyPgPeer,
  async teardown() {},
};

/** graphile-worker's logger, quiet. */
function makeLogger(): Logger {
  return new Logger(() => (level, message) => {
    if (process.env.PEERS_DEBUG && (level === "error" || level === "warning")) console.error("graphile", level, message);
  });
}

export default system;
