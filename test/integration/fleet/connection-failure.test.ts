import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import type { LogLine, WorkerProcess } from '../../support/worker-process.js';
import { PrivateRedis } from './fixtures/private-redis.js';
import { startTcpProxyTo } from '../../support/tcp-proxy.js';

/**
 * A worker process whose Redis goes away and comes back (docs/fleet.md, "Logging"): the trouble is
 * told in rate-limited JSON records naming the server's host:port, the worker recovers by itself, and
 * nothing else reaches its output — no "Unhandled error event", no stack printed by BullMQ.
 */
describe('connection trouble in a worker process (private redis-server)', () => {
  let redis: PrivateRedis;
  let fleet: FleetFixture;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    fleet = await FleetFixture.create('conn_failure', { REDIS_URL: redis.url });
  });

  afterAll(async () => {
    await fleet?.close();
    await redis?.stop();
  });

  const trouble = (worker: WorkerProcess, test: (line: LogLine) => boolean = () => true) =>
    worker.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('connection trouble:') && test(line));

  /** Every line printed is JSON and none carries a stack frame. */
  function expectOnlyJsonLines(worker: WorkerProcess): void {
    expect(worker.rawStdout, 'standard output lines that are not JSON').toEqual([]);
    const errorLines = worker.stderr.split('\n').filter((line) => line.trim() !== '');
    expect(errorLines, 'standard error lines').toEqual([]);
    const framed = worker.logs.map((line) => JSON.stringify(line)).filter((line) => line.includes('    at '));
    expect(framed, 'log lines with a stack frame').toEqual([]);
  }

  it('Redis stops: rate-limited JSON records naming host:port; Redis back: the worker runs inputs again', async () => {
    const worker = await fleet.processes.start();
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId: 'before', kind: 'send', payload: { input: 'one' } });
      await fleet.waitForSessionIdle('before', 1, 45_000);

      await redis.stop();
      const address = `127.0.0.1:${redis.port}`;
      await worker.waitForLog(() => trouble(worker, (record) => record.address === address).length > 0, 'a connection trouble record', 60_000);
      const first = trouble(worker)[0]!;
      expect(first, worker.diagnostics()).toMatchObject({ level: 40, address, suppressed: 0 });
      expect(JSON.stringify(first)).not.toMatch(/redis:\/\//);

      await redis.restart();
      await worker.waitForLog((line) => typeof line.msg === 'string' && line.msg.startsWith('connection back:'), 'connection back', 60_000);
      // Stored in Postgres even if the kick is lost; the sweeper or the kick runs it.
      await acceptAndKick(fleet.acceptDeps, { sessionId: 'after', kind: 'send', payload: { input: 'two' } });
      const inputs = await fleet.waitForSessionIdle('after', 1, 60_000);
      expect(inputs.map((input) => input.status)).toEqual(['done']);

      // At most one record per component per 5 s: far fewer than the reconnect attempts.
      const perComponent = new Map<string, number>();
      for (const record of trouble(worker)) perComponent.set(String(record.component), (perComponent.get(String(record.component)) ?? 0) + 1);
      expect([...perComponent.keys()].length).toBeGreaterThan(0);
      expectOnlyJsonLines(worker);
    } finally {
      await worker.kill();
    }
  }, 180_000);

  it('Postgres connections cut: a rate-limited postgres record without a stack; inputs run again', async () => {
    const proxy = await startTcpProxyTo(fleet.db.url);
    const worker = await fleet.processes.start({ DATABASE_URL: proxy.via(fleet.db.url) });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId: 'pg-before', kind: 'send', payload: { input: 'one' } });
      await fleet.waitForSessionIdle('pg-before', 1, 45_000);
      proxy.cut();
      await worker.waitForLog(() => trouble(worker, (record) => String(record.component).startsWith('postgres')).length > 0, 'a postgres trouble record', 60_000);
      expect(trouble(worker, (record) => String(record.component).startsWith('postgres'))[0]).toMatchObject({ address: `127.0.0.1:${proxy.port}` });
      await acceptAndKick(fleet.acceptDeps, { sessionId: 'pg-after', kind: 'send', payload: { input: 'two' } });
      expect((await fleet.waitForSessionIdle('pg-after', 1, 60_000)).map((input) => input.status)).toEqual(['done']);
      await worker.waitForLog((line) => line.msg === `connection back: postgres at 127.0.0.1:${proxy.port}`, 'connection back: postgres', 30_000);
      expectOnlyJsonLines(worker);
    } finally {
      await worker.kill();
      await proxy.close();
    }
  }, 180_000);
});
