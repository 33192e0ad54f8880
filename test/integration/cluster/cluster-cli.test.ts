import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../../support/redis-cluster.js';
import { runCliProcess } from '../../support/run-cli-process.js';

/** The `loopfleet` client commands on a Redis Cluster, configured by the same two variables as the workers. */
describe.skipIf(!redisClusterAvailable())('the CLI on a Redis Cluster', () => {
  let cluster: RunningRedisCluster;
  let fleet: FleetFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    fleet = await FleetFixture.create('cluster_cli', { REDIS_CLUSTER_NODES: cluster.nodesEnv, LOOPFLEET_QUEUE_SHARDS: '3' });
    await fleet.startWorker();
    env = {
      DATABASE_URL: fleet.config.databaseUrl,
      REDIS_URL: fleet.config.redisUrl,
      REDIS_CLUSTER_NODES: cluster.nodesEnv,
      LOOPFLEET_QUEUE_SHARDS: '3',
      LOOPFLEET_QUEUE: fleet.config.queueName,
    };
  }, 60_000);

  afterAll(async () => {
    await fleet?.close();
    await cluster?.stop();
  });

  it('send --follow prints the answer, and tail replays the session from its stream', async () => {
    const sent = await runCliProcess(['send', 'cli-1', 'hello', '--follow'], env);
    expect(sent.stderr).toContain('status completed');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('Echo: hello');
    const tailed = await runCliProcess(['tail', 'cli-1', '--no-follow', '--json'], env);
    expect(tailed.code).toBe(0);
    const types = tailed.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types[0]).toBe('input_accepted');
    expect(types).toContain('input_finished');
  }, 90_000);
});
