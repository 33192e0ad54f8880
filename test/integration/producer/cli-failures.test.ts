import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { runCliInProcess } from '../../support/run-cli-process.js';
import { startTcpProxyTo, type TcpProxy } from '../../support/tcp-proxy.js';
import { Gates, routingLlm } from './routing-llm.js';

/**
 * The CLI's lines for the two client failures: `submit-input` naming no pending question exits 1
 * with `[interaction.not_pending]`; an add whose wake-up cannot be queued (Redis stops answering
 * after the CLI connected) prints one warning on standard error, naming Redis's host:port, and exits 0.
 */
describe('loopfleet submit-input and send when part of the add fails', () => {
  let fleet: FleetFixture;
  let env: NodeJS.ProcessEnv;
  let proxy: TcpProxy;
  const gates = new Gates();

  beforeAll(async () => {
    fleet = await FleetFixture.create('cli_failures');
    await fleet.startWorker({ llm: routingLlm(gates), settings: { sweepEveryMs: 500, sweepGraceMs: 300 } });
    proxy = await startTcpProxyTo(fleet.config.redisUrl);
    env = { DATABASE_URL: fleet.config.databaseUrl, REDIS_URL: proxy.via(fleet.config.redisUrl), LOOPFLEET_QUEUE: fleet.config.queueName };
  });

  afterAll(async () => {
    gates.openAll();
    await proxy?.close();
    await fleet?.close();
  });

  it('submit-input with an interaction id the session does not wait on exits 1 naming interaction.not_pending', async () => {
    expect(await runCliInProcess(['send', 'cli-ask', 'ask:Which colour?', '--follow'], env)).toMatchObject({ code: 10 });
    const run = await runCliInProcess(['submit-input', 'cli-ask', 'not-the-question', 'blue'], env);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^loopfleet submit-input: \[interaction\.not_pending\] session cli-ask has no pending question not-the-question: it waits on \S+\n$/);
    expect(await fleet.store.listInputs('cli-ask', { limit: 10 })).toHaveLength(1);
  });

  /**
   * Runs one CLI command while every Redis connection that carries `sessionId` stops answering (the
   * kick, the event, the alarm), until the command prints on stderr; then resets those connections,
   * so the command's close ends instead of waiting on them.
   */
  async function runWithRedisSilenced(sessionId: string, argv: string[]): Promise<{ code: number; out: string; err: string }> {
    proxy.silenceWhen((chunk) => chunk.includes(sessionId));
    const out: string[] = [];
    const err: string[] = [];
    const running = runCli(argv, { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text), env });
    try {
      await fleet.waitFor('the warning', async () => (err.length > 0 ? true : undefined), 30_000);
    } finally {
      proxy.silenceWhen(() => false);
      proxy.cut();
    }
    return { code: await running, out: out.join(''), err: err.join('') };
  }

  it('send whose wake-up is not queued warns once on stderr, exits 0, and the sweeper runs the input', async () => {
    const { code, out, err } = await runWithRedisSilenced('cli-wake-lost', ['send', 'cli-wake-lost', 'stored anyway']);
    expect(code).toBe(0);
    expect(out).toBe('accepted cli-wake-lost seq 1\n');
    expect(err).toBe(`warning: stored, but the wake-up could not be queued (Redis at 127.0.0.1:${proxy.port}); the sweeper will run it\n`);
    const inputs = await fleet.waitForSessionIdle('cli-wake-lost', 1, 45_000);
    expect(inputs.map((input) => input.status)).toEqual(['done']);
  }, 90_000);

  it('timer whose alarm is not queued warns once on stderr and exits 0; the timer is stored', async () => {
    const { code, err } = await runWithRedisSilenced('cli-timer-lost', ['timer', 'cli-timer-lost', 'check', '--in', '1h', '--id', 't1']);
    expect(code).toBe(0);
    expect(err).toBe(`warning: stored, but the wake-up could not be queued (Redis at 127.0.0.1:${proxy.port}); the sweeper will set its alarm once it is due\n`);
    expect(await runCliInProcess(['timers', 'cli-timer-lost', '--json'], env)).toMatchObject({ code: 0, out: expect.stringContaining('"timerId":"t1"') });
  }, 90_000);
});
