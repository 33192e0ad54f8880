import { Redis, type Command } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

describe('fleet end to end (offline scripted model)', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('e2e');
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet.close();
  });

  it('runs inputs of several sessions, each in order, through the worker', async () => {
    const deps = { store: fleet.store, queue: fleet.shards, maxInputBytes: 1 << 20 };
    for (const sessionId of ['alpha', 'beta']) {
      for (const text of ['one', 'two', 'three']) {
        await acceptAndKick(deps, { sessionId, kind: 'send', payload: { input: `${sessionId} ${text}` } });
      }
    }
    for (const sessionId of ['alpha', 'beta']) {
      const inputs = await fleet.waitForSessionIdle(sessionId, 3);
      expect(inputs.map((input) => [input.seq, input.status, input.result?.finalText])).toEqual([
        [1, 'done', `Echo: ${sessionId} one`],
        [2, 'done', `Echo: ${sessionId} two`],
        [3, 'done', `Echo: ${sessionId} three`],
      ]);
      const history = await fleet.store.loadHistory(sessionId);
      expect(history.map((row) => row.message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    }
  });

  it("writes an input's input_finished in the same Redis call as the run's last events, not in a round trip of its own", async () => {
    const sessionId = 'one-write';
    // The event types of every script call naming the session (each type is one of its arguments).
    const calls: string[][] = [];
    const sendCommand = Redis.prototype.sendCommand;
    const spy = vi.spyOn(Redis.prototype, 'sendCommand').mockImplementation(function (this: Redis, command: Command, ...rest: unknown[]) {
      const args = command.args.map(String);
      if ((command.name === 'evalsha' || command.name === 'eval') && args.some((arg) => arg.includes(sessionId))) calls.push(args.filter((arg) => /^[a-z]+(_[a-z]+)+$/.test(arg)));
      return (sendCommand as (...args: unknown[]) => unknown).call(this, command, ...rest) as ReturnType<Redis['sendCommand']>;
    });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'hello' } });
      await fleet.waitForSessionIdle(sessionId, 1);
      await fleet.waitFor('input_finished written', async () => (calls.some((types) => types.includes('input_finished')) ? true : undefined));
    } finally {
      spy.mockRestore();
    }
    const finishing = calls.filter((types) => types.includes('input_finished'));
    expect(finishing).toHaveLength(1);
    expect(finishing[0]).toEqual(expect.arrayContaining(['session_ended', 'input_finished']));
    expect(finishing[0]!.indexOf('input_finished')).toBeGreaterThan(finishing[0]!.indexOf('session_ended'));
  });
});

describe('fleet end to end: many drains at once in one worker', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('e2e_wide', { WORKER_CONCURRENCY: '32' });
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet.close();
  });

  it('runs 24 sessions side by side without a listener-leak warning on the shared shutdown signal', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const sessions = Array.from({ length: 24 }, (_, i) => `wide-${i}`);
      await Promise.all(sessions.map((sessionId) => acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: `hello ${sessionId}` } })));
      for (const sessionId of sessions) {
        const [input] = await fleet.waitForSessionIdle(sessionId, 1);
        expect(input?.result?.finalText).toBe(`Echo: hello ${sessionId}`);
      }
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('fleet end to end: the LOOPFLEET_EVENTS_* settings shape what the worker writes', () => {
  let fleet: FleetFixture;
  // MAXLEN 20: trimming keeps at least that many entries, so the last input's 18 survive whatever the
  // stream nodes' sizes (Redis cuts whole nodes, which hold fewer entries as events grow).
  const settings = { LOOPFLEET_EVENTS_TTL_SECONDS: '120', LOOPFLEET_EVENTS_MAXLEN: '20', LOOPFLEET_EVENTS_COALESCE_MS: '0' };

  beforeAll(async () => {
    fleet = await FleetFixture.create('e2e_events', settings);
    // Four deltas per reply: merged into one entry by the default 25 ms window, four entries without one.
    const replies = Array.from({ length: 8 }, () => ({ chunks: ['one ', 'two ', 'three ', 'four'] }));
    await fleet.startWorker({ llm: new ScriptedLlm(replies) });
  });

  afterAll(async () => {
    await fleet.close();
  });

  it('expires the stream after LOOPFLEET_EVENTS_TTL_SECONDS, trims it near LOOPFLEET_EVENTS_MAXLEN and merges no deltas with a window of 0', async () => {
    const sessionId = 'configured';
    for (let n = 1; n <= 8; n += 1) {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: `input ${n}` } });
      await fleet.waitForSessionIdle(sessionId, n);
    }
    const streamKey = eventStreamKey(fleet.config.queueName, sessionId);
    const published = await fleet.waitFor('every input_finished written', async () => {
      const [last] = (await fleet.redis.xrevrange(streamKey, '+', '-', 'COUNT', 1)) as [string, string[]][];
      const data = last === undefined ? null : (JSON.parse(last[1][3]!) as { seq: number; inputSeq: number });
      return last?.[1][1] === 'input_finished' && data?.inputSeq === 8 ? data.seq : undefined;
    });
    const ttl = await fleet.redis.ttl(streamKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(120);
    // Trimming is approximate (whole stream nodes of 100 entries): what is left is below what was written.
    expect(published).toBeGreaterThan(110);
    expect(await fleet.redis.xlen(streamKey)).toBeLessThan(published);
    const entries = (await fleet.redis.xrange(streamKey, '-', '+')) as [string, string[]][];
    const deltasOfLast = entries.filter(([, fields]) => fields[1] === 'stream_delta' && (JSON.parse(fields[3]!) as { inputSeq: number }).inputSeq === 8);
    expect(deltasOfLast.map(([, fields]) => (JSON.parse(fields[3]!) as { text: string }).text)).toEqual(['one ', 'two ', 'three ', 'four']);
  });
});
