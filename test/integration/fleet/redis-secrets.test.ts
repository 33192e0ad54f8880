import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, uniqueName, type TestDatabase } from '../../support/test-database.js';
import { WorkerProcess, WorkerProcesses, type LogLine } from '../../support/worker-process.js';
import { freePort, PrivateRedis } from './fixtures/private-redis.js';

/**
 * The Redis password never reaches a worker's output (README, "Secrets"). ioredis puts the command
 * that failed on its error, `AUTH <user> <password>` included, and BullMQ prints the errors of an
 * object nobody listens to with `console.error`, arguments and all. A real `loopfleet worker` runs
 * against a Redis that refuses its password, one that is not there, and one that goes away and comes
 * back with another password; every line it prints, on standard output and standard error, is read.
 */
const PASSWORD = 'Lf-redis-S3cret-5b1e';

describe('the Redis password in a worker process (private redis-server)', () => {
  let db: TestDatabase;
  const processes = new WorkerProcesses(() => ({}));
  const servers: PrivateRedis[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('redis_secrets');
  });

  afterAll(async () => {
    await processes.killAll();
    await Promise.all(servers.map((server) => server.stop()));
    await db?.drop();
  });

  function spawnWorker(redisUrl: string): WorkerProcess {
    return processes.spawn({
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl,
      LOOPFLEET_QUEUE: uniqueName('redis_secrets'),
      LLM_PROVIDER: 'scripted',
      METRICS_PORT: '0',
      LOG_LEVEL: 'debug',
    });
  }

  async function privateRedis(requirePass: string): Promise<PrivateRedis> {
    const server = await PrivateRedis.start({ requirePass });
    servers.push(server);
    return server;
  }

  /** Every line printed carries no password; standard output is JSON lines, standard error at most the CLI's one-line message. */
  function expectNoPasswordPrinted(worker: WorkerProcess): void {
    const printed = [...worker.logs.map((line) => JSON.stringify(line)), ...worker.rawStdout, ...worker.stderr.split('\n')];
    expect(printed.filter((line) => line.includes(PASSWORD)), worker.diagnostics()).toEqual([]);
    expect(worker.rawStdout, 'standard output lines that are not JSON').toEqual([]);
    const errorLines = worker.stderr.split('\n').filter((line) => line !== '');
    expect(errorLines.filter((line) => !line.startsWith('loopfleet worker: ')), 'standard error besides the CLI message').toEqual([]);
    expect(errorLines.length).toBeLessThanOrEqual(1);
  }

  const connectionErrors = (worker: WorkerProcess, test: (line: LogLine) => boolean) =>
    worker.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('connection trouble:') && test(line));

  it('a refused AUTH at start: the worker exits 1 and prints no password', async () => {
    const redis = await privateRedis('some-other-password');
    const worker = spawnWorker(`redis://lf:${PASSWORD}@127.0.0.1:${redis.port}`);
    const exit = await worker.waitForExit(60_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
    expect(worker.logs.some((line) => line.msg === 'worker failed to start; closing what it opened')).toBe(true);
    expect(connectionErrors(worker, (line) => JSON.stringify(line).includes('WRONGPASS')).length, worker.diagnostics()).toBeGreaterThan(0);
    expectNoPasswordPrinted(worker);
  }, 90_000);

  it('no Redis at all: the connection errors are JSON log lines without the password', async () => {
    const port = await freePort();
    const worker = spawnWorker(`redis://lf:${PASSWORD}@127.0.0.1:${port}`);
    // Each of its connections retries again and again, each told at most once per 5 s: two records of each.
    await worker.waitForLog(() => connectionErrors(worker, (line) => JSON.stringify(line).includes('ECONNREFUSED')).length >= 8, 'refused connections', 60_000);
    await worker.kill();
    expectNoPasswordPrinted(worker);
  }, 90_000);

  it('an outage, then Redis back with another password: no line carries the password', async () => {
    const redis = await privateRedis(PASSWORD);
    const worker = await spawnWorker(`redis://default:${PASSWORD}@127.0.0.1:${redis.port}`).ready();
    await redis.stop();
    await worker.waitForLog((line) => connectionErrors(worker, () => true).length > 0 && JSON.stringify(line).includes('ECONNREFUSED'), 'a refused reconnection', 60_000);
    await redis.restart({ requirePass: 'some-other-password' });
    await worker.waitForLog((line) => JSON.stringify(line).includes('WRONGPASS'), 'a refused AUTH on reconnection', 60_000);
    await worker.kill();
    expectNoPasswordPrinted(worker);
  }, 120_000);
});
