import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOf } from '../../../src/fleet/redis-layout.js';
import { REDIS_CLUSTER_MISSING, redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../../support/redis-cluster.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';
import { doneInputs, expectRanOnceInOrder, openInputs, sendRounds, sessionsOverShards } from './fixtures/cluster-checks.js';

const SHARDS = 3;
const SESSIONS = 30;
const INPUTS = 5;

/**
 * kill -9 on a Redis Cluster (I1–I3, I6 in docs/invariants.md): three `loopfleet worker` processes
 * run 30 sessions × 5 inputs over 3 queue shards against a slow model; once a fifth of the inputs are
 * done, one worker is SIGKILLed mid-run and another started. Every input finishes exactly once, in
 * order, in Postgres and on its session's hash-tagged stream.
 */
describe.skipIf(!redisClusterAvailable())('kill -9 of a worker process on a Redis Cluster', () => {
  let cluster: RunningRedisCluster;
  let pf: ProcessFleet;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    pf = await ProcessFleet.create(
      'cchaos',
      { REDIS_CLUSTER_NODES: cluster.nodesEnv, LOOPFLEET_QUEUE_SHARDS: String(SHARDS), LEASE_TTL_MS: '2000', WORKER_CONCURRENCY: '6', SWEEP_EVERY_MS: '1000', SWEEP_GRACE_MS: '500' },
      { replyDelayMs: 300 },
    );
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
    await cluster?.stop();
  });

  it(`${SESSIONS} sessions × ${INPUTS} inputs over ${SHARDS} shards, a worker SIGKILLed mid-run: every input done exactly once, in order`, async () => {
    const { fleet } = pf;
    const started = Date.now();
    const workers = await Promise.all([0, 1, 2].map(() => fleet.processes.start(pf.workerEnv)));
    const sessions = sessionsOverShards(fleet, 'cchaos', SESSIONS);
    await sendRounds(fleet, sessions, INPUTS);

    // Mid-run: a fifth done, most still open.
    await fleet.waitFor('a fifth of the inputs done', async () => ((await doneInputs(fleet)) >= (SESSIONS * INPUTS) / 5 ? true : undefined), 60_000);
    const openAtKill = await openInputs(fleet);
    expect(openAtKill).toBeGreaterThan(SESSIONS);
    // The victim is a worker that holds a running input now, so another worker must take it over.
    const victim = await fleet.waitFor('a worker holding a running input', async () => {
      const { rows } = await fleet.pool.query<{ owner: string }>(
        `SELECT s.lease_owner AS owner FROM sessions s JOIN session_inputs i ON i.session_id = s.id
          WHERE i.status = 'running' AND s.lease_owner IS NOT NULL`,
      );
      return workers.find((worker) => rows.some((row) => row.owner === worker.workerId));
    });
    const killedAtMs = Date.now() - started;
    await victim.kill();
    await fleet.processes.start(pf.workerEnv);

    await fleet.waitFor('every input finished', async () => ((await openInputs(fleet)) === 0 ? true : undefined), 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${fleet.processes.diagnostics()}`);
    });
    const elapsedMs = Date.now() - started;
    // One more input per session once the killing stopped: its drain also publishes the input_finished
    // of an input whose holder died between the terminal commit and the XADD (lost-finish-events.ts).
    await sendRounds(fleet, sessions, 1, INPUTS);

    let resumed = 0;
    for (const sessionId of sessions) {
      const { rows } = await expectRanOnceInOrder(fleet, sessionId, INPUTS + 1);
      resumed += rows.filter((input) => input.attempts > 1).length;
    }
    // The victim held inputs when it died: another worker took them over.
    expect(resumed).toBeGreaterThanOrEqual(1);
    const shards = new Set(sessions.map((sessionId) => shardOf(fleet.shards.layout, sessionId)));
    expect(shards.size).toBe(SHARDS);
    console.info(`cluster chaos: ${SESSIONS * INPUTS} inputs in ${elapsedMs} ms; worker killed at ${killedAtMs} ms with ${openAtKill} open; ${resumed} inputs taken over`);
  }, 120_000);
});

if (!redisClusterAvailable()) console.warn(REDIS_CLUSTER_MISSING);
