/**
 * DBOS Transact 5 (Node 20), its system database on the run's Postgres database: a workflow per input
 * (workflow id = the input id), enqueued by `DBOSClient.enqueue` on a queue partitioned by session
 * with `partitionConcurrency: 1` (one workflow at a time per session, in enqueue order). Loading the
 * history, each model call, the tool and appending the history are steps (`DBOS.runStep`, checkpointed
 * in the system database); the history table is written through a pg pool of the app's, with
 * `synchronous_commit` on. Stream entries are written after each step returns, so a recovered workflow
 * may write a step's entries again (its checkpointed steps are not run again).
 */
import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';
import { Redis } from 'ioredis';
import pg from 'pg';
import { appendHistory, createHistoryTable, loadHistory, verifyPgPeer } from '../lib/pg-history.js';
import { packageVersion } from '../lib/package-version.js';
import { runStandardInput } from '../lib/standard-loop.js';
import { InputEvents, type StandardModel } from '../lib/standard.js';
import type { PeerContext, PeerSystem, StandardInput } from '../lib/system.js';

const QUEUE = 'standard_input';
const WORKFLOW = 'standardInput';

/** What the workflow reaches in the worker process (DBOS workflows are module-level functions). */
let deps: { model: StandardModel; redis: Redis; pool: pg.Pool; runId: string } | null = null;

async function standardInput(input: StandardInput): Promise<void> {
  if (deps === null) throw new Error('dbos peer: the worker is not started');
  const { model, redis, pool, runId } = deps;
  await runStandardInput(model, new InputEvents(redis, runId, input), input.text, {
    loadHistory: () => DBOS.runStep(() => loadHistory(pool, input.sessionId), { name: 'load-history' }),
    step: (name, fn) => DBOS.runStep(fn, { name }),
    appendHistory: (messages) => DBOS.runStep(() => appendHistory(pool, input.sessionId, input.inputId, messages), { name: 'append-history' }),
  });
}
let registered: ((input: StandardInput) => Promise<void>) | null = null;

function config(ctx: PeerContext, poolSize: number) {
  return { name: 'peers', systemDatabaseUrl: ctx.pgUrl, systemDatabasePoolSize: poolSize, logLevel: 'error' };
}

const system: PeerSystem = {
  name: 'dbos',
  versions: () => ({ '@dbos-inc/dbos-sdk': packageVersion('@dbos-inc/dbos-sdk'), node: process.version }),
  // Workflows run at once by this process, the dispatch loop's polling interval (default 1 s), and the
  // system database pool (every step is a checkpoint write there).
  sweep: [
    { workerConcurrency: 64, pollMs: 100, poolSize: 20 },
    { workerConcurrency: 128, pollMs: 50, poolSize: 20 },
    { workerConcurrency: 128, pollMs: 50, poolSize: 40 },
  ],
  async setup(ctx) {
    await createHistoryTable(ctx.pgUrl);
    return { serverPids: [] };
  },
  async startWorker(ctx, model) {
    deps = { model, redis: new Redis(ctx.redisUrl), pool: new pg.Pool({ connectionString: ctx.pgUrl, max: 10 }), runId: ctx.runId };
    registered ??= DBOS.registerWorkflow(standardInput, { name: WORKFLOW });
    DBOS.setConfig(config(ctx, Number(ctx.settings['poolSize'] ?? 20)));
    await DBOS.launch();
    await DBOS.registerQueue(QUEUE, {
      partitionConcurrency: 1,
      workerConcurrency: Number(ctx.settings['workerConcurrency'] ?? 64),
      minPollingIntervalMs: Number(ctx.settings['pollMs'] ?? 100),
      onConflict: 'always_update',
    });
    return {
      async stop() {
        await DBOS.shutdown();
        deps?.redis.disconnect();
        await deps?.pool.end();
        deps = null;
      },
    };
  },
  async createProducer(ctx) {
    const client = await DBOSClient.create({ systemDatabaseUrl: ctx.pgUrl, systemDatabasePoolSize: 16 });
    return {
      async add(input) {
        await client.enqueue({ queueName: QUEUE, workflowName: WORKFLOW, workflowID: input.inputId, queuePartitionKey: input.sessionId }, input);
      },
      async close() {
        await client.destroy();
      },
    };
  },
  verify: verifyPgPeer,
  async teardown() {},
};

export default system;
