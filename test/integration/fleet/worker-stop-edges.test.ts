import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { createLogger } from '../../../src/observability/logger.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { startWorker } from '../../../src/worker/start-worker.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { startTcpProxyTo, type TcpProxy } from '../../support/tcp-proxy.js';
import { WorkerProcess } from '../../support/worker-process.js';
import { FORCED_EXIT_MS } from '../../../src/cli/commands/worker.js';
import { heldReply, InstrumentedStore, sessionEvents } from './fixtures/fleet-helpers.js';

/**
 * The edges of a worker's life (docs/fleet.md "Shutdown"): a start that
 * fails closes what it opened (the process exits 1); a drain whose lease-and-claim returns after
 * shutdown began runs the input it claimed instead of wasting that attempt; and a shutdown while
 * Redis does not answer still releases the lease (the finish stays owed, I6), and a forced close ends;
 * a worker process whose forced close still hangs exits anyway.
 */
describe('worker start-up failure, late claims and shutdown without Redis', () => {
  let fleet: FleetFixture;
  const logger = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', format: 'json', redactContent: true });

  beforeAll(async () => {
    fleet = await FleetFixture.create('stop_edges');
  });

  afterAll(async () => {
    await fleet?.close();
  });

  const send = (sessionId: string, text: string) => acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text } });
  const echo = () => new ScriptedLlm([], { whenExhausted: 'echo' });

  /** A listener holding a port, so a worker's health server cannot bind it. */
  async function takenPort(): Promise<{ port: number; server: Server }> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, () => resolve()));
    return { port: (server.address() as { port: number }).port, server };
  }

  const tcpHandles = () => process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap' || name === 'TCPServerWrap').length;

  it('a start that fails after connecting (health port taken) rejects and leaves nothing open', async () => {
    const { port, server } = await takenPort();
    try {
      // Settle the fixture's own connections first, so the count below is this worker's alone.
      await fleet.pool.query('SELECT 1');
      await fleet.redis.ping();
      const before = tcpHandles();
      const config = Object.assign({}, fleet.config, { metrics: Object.assign({}, fleet.config.metrics, { port }) });
      await expect(startWorker(config, { logger, llm: echo() })).rejects.toThrow(/EADDRINUSE/);
      await fleet.waitFor('the failed worker to close its connections', async () => (tcpHandles() <= before ? true : undefined), 20_000);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a bad agent profile is refused with config.invalid before any connection is opened', async () => {
    await fleet.pool.query('SELECT 1');
    await fleet.redis.ping();
    const before = tcpHandles();
    await expect(startWorker(fleet.config, { logger, llm: echo(), profile: { toolConcurrency: 0 } })).rejects.toMatchObject({ code: 'config.invalid' });
    expect(tcpHandles()).toBe(before);
  });

  it('loopfleet worker whose health port is taken exits 1 instead of staying up', async () => {
    const { port, server } = await takenPort();
    const worker = WorkerProcess.spawn('stop-edges-port-taken', fleet.processEnv({ METRICS_PORT: String(port) }));
    try {
      const exit = await worker.waitForExit(30_000);
      expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
      expect(worker.stderr).toMatch(/EADDRINUSE/);
    } finally {
      await worker.kill();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 60_000);

  it('a lease-and-claim that returns after close() began runs the input it claimed: no attempt is wasted', async () => {
    const store = new InstrumentedStore();
    const sessionId = 'claimed-while-closing';
    // Held once it has run: the lease is taken and the input claimed (its attempt counted).
    const claim = store.hold('acquireLeaseAndClaim', { when: (args) => (args[0] as { sessionId: string }).sessionId === sessionId, after: true });
    const worker = await fleet.startWorker({ wrapStore: store.wrap, llm: echo() });
    await send(sessionId, 'claimed just before shutdown');
    await claim.entered;
    const closing = worker.close({ graceMs: 30_000 });
    claim.release();
    await closing;
    expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'done', attempts: 1, result: { finalText: 'Echo: claimed just before shutdown' } });
    const row = (await fleet.pool.query(`SELECT lease_expires_at, finishes_owed FROM sessions WHERE id = $1`, [sessionId])).rows[0];
    expect(row).toEqual({ lease_expires_at: null, finishes_owed: false });
  });

  describe('Redis stops answering during shutdown', () => {
    let proxy: TcpProxy;

    beforeAll(async () => {
      proxy = await startTcpProxyTo(fleet.config.redisUrl);
    });

    afterAll(async () => {
      await proxy?.close();
    });

    it('the finishing run still releases its lease (finish owed), a forced close ends, and the next worker publishes the finish once', async () => {
      const sessionId = 'redis-silent-at-shutdown';
      const held = heldReply({ text: 'finished while Redis was silent' });
      const config = Object.assign({}, fleet.config, { redisUrl: proxy.via(fleet.config.redisUrl) });
      const worker = await startWorker(config, { logger, healthServer: false, llm: new ScriptedLlm([held.step], { whenExhausted: 'echo' }) });
      let closing: Promise<void> | undefined;
      try {
        await send(sessionId, 'in flight');
        await held.entered;
        // The run's first events are on the stream before Redis goes silent, so the repair below
        // decides from input 1's own entries (begun, not finished). Under load the writer's first
        // flush could otherwise come after the silence, and nothing of input 1 (this fixture's accept
        // publishes no input_accepted) would reach the stream: the case of finish-events.test.ts "a
        // holder that died before any event of its input got out …".
        await fleet.waitFor('input 1 on the stream', async () => ((await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).some((event) => event.type === 'input_started' && event.data.inputSeq === 1) ? true : undefined));
        // Every connection of the worker goes silent: commands are held, never answered nor failed.
        expect(proxy.silenceOpen()).toBeGreaterThan(0);
        closing = worker.close({ graceMs: 600_000 });
        held.release();
        // The run ends (its terminal commit is Postgres) and the drain releases the lease although
        // its input_finished and hand-back kick never got an answer: another worker may take over.
        const row = await fleet.waitFor(
          'the lease release',
          async () => {
            const found = (await fleet.pool.query(`SELECT lease_expires_at, finishes_owed FROM sessions WHERE id = $1`, [sessionId])).rows[0] as { lease_expires_at: Date | null; finishes_owed: boolean };
            return found.lease_expires_at === null ? found : undefined;
          },
          20_000,
        );
        // The finish was not confirmed, so the release says it is owed (I6).
        expect(row.finishes_owed).toBe(true);
        expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'done', attempts: 1 });
        // A second close forces it: it ends within its bounds, Redis silent or not.
        let deadline: NodeJS.Timeout | undefined;
        const ended = await Promise.race([
          worker.close({ force: true }).then(() => true),
          new Promise<false>((resolve) => (deadline = setTimeout(() => resolve(false), 20_000))),
        ]).finally(() => clearTimeout(deadline));
        expect(ended).toBe(true);
      } finally {
        // Whatever happened above, nothing of this worker may outlive the test.
        void closing?.catch(() => {});
        proxy.cut();
      }
      // Another worker, on Redis that answers, repairs the owed finish before running the next input.
      await fleet.startWorker({ llm: echo() });
      await send(sessionId, 'after the silent shutdown');
      await fleet.waitForSessionFinished(sessionId, 2);
      const finishes = (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === 'input_finished');
      expect(finishes.map((event) => event.data.inputSeq)).toEqual([1, 2]);
    }, 90_000);
  });

  describe('a forced close that still hangs', () => {
    // A fleet of its own: the in-process workers the tests above left running share their queue.
    let own: FleetFixture;
    let proxy: TcpProxy;

    beforeAll(async () => {
      own = await FleetFixture.create('hung_close');
      proxy = await startTcpProxyTo(own.config.databaseUrl);
    });

    afterAll(async () => {
      await proxy?.close();
      await own?.close();
    });

    it(`loopfleet worker exits 1 when its close has not ended ${FORCED_EXIT_MS / 1000} s after a second signal (a step commit that never answers)`, async () => {
      // No statement timeout: a silent connection is never given up, so the step commit on it never
      // settles, the drain cannot end, and the pool's end waits for it.
      const env = own.processEnv({ DATABASE_URL: proxy.via(own.config.databaseUrl), DATABASE_STATEMENT_TIMEOUT_MS: '0' });
      // By its name, or its text where it goes unnamed (DATABASE_POOLER=transaction: LOOPFLEET_TEST_PGBOUNCER=1).
      proxy.silenceWhen((chunk) => chunk.includes('loopfleet_commit_step_') || chunk.includes('WITH step AS ('));
      const worker = WorkerProcess.spawn('stop-edges-hung-close', env);
      try {
        await worker.ready();
        await acceptAndKick(own.acceptDeps, { sessionId: 'hung-close', kind: 'send', payload: { input: 'its step commit never answers' } });
        await own.waitFor('the step commit to go silent', async () => (proxy.silenced() > 0 ? true : undefined), 30_000);
        worker.signal('SIGTERM');
        await worker.waitForLog((line) => line.msg === 'shutting down', 'shutting down');
        worker.signal('SIGTERM');
        await worker.waitForLog((line) => line.msg === 'forced shutdown', 'forced shutdown');
        const exit = await worker.waitForExit(FORCED_EXIT_MS + 30_000);
        expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
        expect(worker.logs.some((line) => line.msg === 'worker did not close after a second signal; exiting')).toBe(true);
      } finally {
        await worker.kill();
      }
    }, FORCED_EXIT_MS + 90_000);
  });
});
