import { getEventListeners, once } from 'node:events';
import { Readable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRange } from '../../../src/events/event-subscriber.js';
import type { StreamEvent, StreamItem } from '../../../src/fleet/fleet-events.js';
import { eventFinishedKey, eventSeqKey, eventStreamKey, finishChannel, tailChannel } from '../../../src/fleet/fleet-keys.js';
import { previousStreamId } from '../../../src/producer/stream-cursor.js';
import { ResultTimeoutError } from '../../../src/producer/result-timeout-error.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { Gates, routingLlm } from './routing-llm.js';

/** Collects items until `stop` says so (inclusive). */
async function collect(items: AsyncIterable<StreamItem>, stop: (item: StreamItem, all: StreamItem[]) => boolean): Promise<StreamItem[]> {
  const all: StreamItem[] = [];
  for await (const item of items) {
    all.push(item);
    if (stop(item, all)) break;
  }
  return all;
}

const events = (items: StreamItem[]): StreamEvent[] => items.filter((item): item is StreamEvent => item.kind === 'event');

describe('SessionQueue: add, result, events', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;
  const gates = new Gates();

  beforeAll(async () => {
    fleet = await FleetFixture.create('producer');
    await fleet.startWorker({ llm: routingLlm(gates) });
    // A long re-check: a result that arrives quickly came from an announcement (confirmed in Postgres).
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName, recheckMs: 60_000 });
  });

  afterAll(async () => {
    gates.openAll();
    await queue?.close();
    await fleet?.close();
  });

  it("subscribe() with '$' then add(): the add's input_accepted comes first, though iteration starts after the add", async () => {
    const sessionId = 'subscribe-then-add';
    await queue.add('send', { sessionId, input: 'first' }).then((handle) => handle.result({ timeoutMs: 20_000 }));
    const controller = new AbortController();
    const items = queue.subscribe(sessionId, { signal: controller.signal });
    const handle = await queue.add('send', { sessionId, input: 'second' });
    const [first] = await collect(items, () => true);
    controller.abort();
    expect(first).toMatchObject({ kind: 'event', type: 'input_accepted', data: { inputSeq: handle.seq } });
    await handle.result({ timeoutMs: 20_000 });
  });

  it('adds an input and resolves its result from the event stream', async () => {
    const handle = await queue.add('send', { sessionId: 'stream-1', input: 'hold:stream-1' });
    expect(handle).toMatchObject({ sessionId: 'stream-1', seq: 1, duplicate: false });
    expect(handle.inputId).toMatch(/^[0-9a-f-]{36}$/);
    const pending = handle.result({ timeoutMs: 20_000 });
    await fleet.waitFor('the run to start', async () => ((await fleet.store.getInput('stream-1', 1))?.status === 'running' ? true : undefined));
    gates.open('stream-1');
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: 'completed', finalText: 'held stream-1', rounds: 1, toolCalls: 0, error: null });
    expect(outcome.usage.llmCalls).toBe(1);
  });

  // Anyone allowed to PUBLISH on the queue's Redis can announce a finish: result() answers with what
  // Postgres holds (docs/invariants.md, S3).
  it('a forged input_finished on the finish channel does not resolve result(); the real finish does, with the outcome Postgres holds', async () => {
    const sessionId = 'forged-finish';
    // A real finish, whose entry the forgery copies: it has every field a genuine one has.
    await (await queue.add('send', { sessionId, input: 'hello' })).result({ timeoutMs: 20_000 });
    const entries = await fleet.redis.xrange(eventStreamKey(fleet.config.queueName, sessionId), '-', '+');
    const [realId, fields] = entries.find(([, entry]) => entry[entry.indexOf('type') + 1] === 'input_finished')!;
    const realData = JSON.parse(fields[fields.indexOf('data') + 1]!) as Record<string, unknown>;

    const handle = await queue.add('send', { sessionId, input: 'hold:forged-finish' });
    await fleet.waitFor('the run to start', async () => ((await fleet.store.getInput(sessionId, handle.seq))?.status === 'running' ? true : undefined));
    let settled = false;
    const pending = handle.result({ timeoutMs: 30_000 }).finally(() => {
      settled = true;
    });
    const channel = finishChannel(fleet.config.queueName, sessionId);
    await fleet.waitFor('the wait to subscribe', async () => (((await fleet.redis.pubsub('NUMSUB', channel)) as [string, number])[1] > 0 ? true : undefined));
    const forged = Object.assign({}, realData, { inputSeq: handle.seq, finalText: 'forged', status: 'completed', error: null });
    expect(await fleet.redis.publish(channel, `${realId} ${JSON.stringify(forged)}`)).toBe(1);
    // Redis delivers a channel's messages in order: the forgery reaches the wait before the real
    // announcement, which cannot come before the gate opens.
    expect(settled).toBe(false);
    gates.open('forged-finish');
    await expect(pending).resolves.toMatchObject({ status: 'completed', finalText: 'held forged-finish' });
  });

  it('resolves from Postgres when the input finished before result() was called', async () => {
    const handle = await queue.add('send', { sessionId: 'done-1', input: 'hello' });
    await fleet.waitForSessionIdle('done-1', 1);
    await expect(queue.result('done-1', handle.seq)).resolves.toMatchObject({ status: 'completed', finalText: 'Echo: hello' });
  });

  it('falls back to Postgres when the stream was deleted', async () => {
    const handle = await queue.add('send', { sessionId: 'lost-1', input: 'lost' });
    await fleet.waitForSessionIdle('lost-1', 1);
    await fleet.redis.del(eventStreamKey(fleet.config.queueName, 'lost-1'));
    await expect(handle.result({ timeoutMs: 10_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Echo: lost' });
  });

  it('re-checks Postgres while waiting when the input_finished event never arrives', async () => {
    // Same database, another queue name: this client watches a stream the workers never write to.
    const blind = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: `${fleet.config.queueName}_x`, recheckMs: 100 });
    try {
      const handle = await queue.add('send', { sessionId: 'blind-1', input: 'hold:blind-1' });
      const pending = blind.result('blind-1', handle.seq, { timeoutMs: 20_000 });
      gates.open('blind-1');
      await expect(pending).resolves.toMatchObject({ status: 'completed', finalText: 'held blind-1' });
    } finally {
      await blind.close();
      // The other queue's BullMQ keys (its meta): the fixture cleans only its own queue's.
      await fleet.deleteKeys(`bull:${fleet.config.queueName}_x:*`);
    }
  });

  it('keeps waiting across a deleted stream while the input runs', async () => {
    const handle = await queue.add('send', { sessionId: 'lost-2', input: 'hold:lost-2' });
    const pending = handle.result({ timeoutMs: 20_000 });
    await fleet.waitFor('the run to start', async () => ((await fleet.store.getInput('lost-2', 1))?.status === 'running' ? true : undefined));
    await fleet.redis.del(eventStreamKey(fleet.config.queueName, 'lost-2'));
    gates.open('lost-2');
    await expect(pending).resolves.toMatchObject({ status: 'completed', finalText: 'held lost-2' });
  });

  it('times out with a typed error, and stops when the signal aborts', async () => {
    const handle = await queue.add('send', { sessionId: 'slow-1', input: 'hold:slow-1' });
    const timedOut = await handle.result({ timeoutMs: 200 }).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(ResultTimeoutError);
    expect(timedOut).toMatchObject({ code: 'system.infrastructure', details: { sessionId: 'slow-1', seq: 1, timeoutMs: 200 } });
    const controller = new AbortController();
    const aborted = handle.result({ signal: controller.signal }).catch((error: unknown) => error);
    controller.abort(new Error('caller gave up'));
    expect(await aborted).toMatchObject({ message: 'caller gave up' });
    gates.open('slow-1');
    await expect(handle.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed' });
  });

  it('makes a repeated inputId idempotent: same seq, one run', async () => {
    const first = await queue.add('send', { sessionId: 'idem-1', input: 'once' }, { inputId: 'order-42' });
    const second = await queue.add('send', { sessionId: 'idem-1', input: 'once', inputId: 'order-42' });
    expect(second).toMatchObject({ seq: first.seq, inputId: 'order-42', duplicate: true });
    expect(first.duplicate).toBe(false);
    await expect(second.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ finalText: 'Echo: once' });
    const inputs = await fleet.store.listInputs('idem-1');
    expect(inputs).toHaveLength(1);
    const history = await queue.history('idem-1');
    expect(history.map((row) => row.message.role)).toEqual(['user', 'assistant']);
    // The duplicate's handle published nothing of its own, yet still finds the input's events.
    const replayed = events(await collect(second.events(), () => false)).map((event) => event.type);
    expect(replayed[0]).toBe('input_accepted');
    expect(replayed.at(-1)).toBe('input_finished');
  });

  it('gives a steered input the outcome of the run it joined, with steeredInto', async () => {
    const host = await queue.add('send', { sessionId: 'steer-1', input: 'hold:steer-1' });
    await fleet.waitFor('the host to start', async () => ((await fleet.store.getInput('steer-1', host.seq))?.status === 'running' ? true : undefined));
    const steered = await queue.add('send', { sessionId: 'steer-1', input: 'also this' }, { mode: 'steer' });
    const steeredEvents = collect(steered.events(), () => false);
    gates.open('steer-1');
    const hostOutcome = await host.result({ timeoutMs: 20_000 });
    expect(hostOutcome.finalText).toBe('Echo: <follow_up>\nalso this\n</follow_up>');
    await expect(steered.result({ timeoutMs: 20_000 })).resolves.toEqual({ ...hostOutcome, steeredInto: host.seq });
    const types = events(await steeredEvents).map((event) => [event.type, event.data.steeredInto]);
    expect(types).toEqual([
      ['input_accepted', undefined],
      ['input_finished', host.seq],
    ]);
  });

  it('finds the result of an input that came through the raw BullMQ path', async () => {
    const job = await fleet.queue.add('send', { sessionId: 'raw-1', input: 'from bullmq' }, { jobId: 'raw-job-1' });
    const ingested = await fleet.waitFor('the raw job to be ingested', async () => {
      // The return value is read with the job: it is set once the job has completed.
      const current = await fleet.queue.getJob(job.id!);
      return (current?.returnvalue as { seq: number; inputId: string } | null | undefined) ?? undefined;
    });
    expect(ingested).toMatchObject({ seq: 1, inputId: 'bullmq:raw-job-1' });
    await expect(queue.result('raw-1', ingested.seq, { timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed', finalText: 'Echo: from bullmq' });
  });

  it('handle.events() yields the input from input_accepted through deltas to input_finished, in order', async () => {
    await queue.add('send', { sessionId: 'ev-1', input: 'before' });
    const handle = await queue.add('send', { sessionId: 'ev-1', input: 'hold:ev-1' });
    const collecting = collect(handle.events(), () => false);
    gates.open('ev-1');
    const items = await collecting;
    const types = events(items).map((event) => event.type);
    expect(items.every((item) => item.kind === 'event' && item.data.inputSeq === handle.seq)).toBe(true);
    expect(types[0]).toBe('input_accepted');
    expect(types[1]).toBe('input_started');
    expect(types.at(-1)).toBe('input_finished');
    expect(types.indexOf('stream_delta')).toBeGreaterThan(1);
    const text = events(items).filter((event) => event.type === 'stream_delta').map((event) => event.data.text).join('');
    expect(text).toBe('held ev-1');
    const seqs = events(items).map((event) => event.data.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it('handle.events() ends once the input settles in Postgres, though its input_finished never reaches the stream', async () => {
    // Same database, another queue name: the workers never write to this client's streams.
    const blind = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: `${fleet.config.queueName}_y`, recheckMs: 100 });
    try {
      const handle = await queue.add('send', { sessionId: 'ev-lost', input: 'hold:ev-lost' }, { inputId: 'ev-lost-1' });
      // Held mid-run: the drain holds the lease, so no lease take records the queue again meanwhile.
      await fleet.waitFor('the run to start', async () => ((await fleet.store.getInput('ev-lost', handle.seq))?.status === 'running' ? true : undefined));
      // As a session from before queues were recorded: a duplicate add through another queue is taken.
      await fleet.pool.query(`UPDATE sessions SET queue = '' WHERE id = 'ev-lost'`);
      // The same input again: a handle to it that follows a stream its input_finished never reaches.
      const blindHandle = await blind.add('send', { sessionId: 'ev-lost', input: 'hold:ev-lost' }, { inputId: 'ev-lost-1' });
      expect(blindHandle).toMatchObject({ seq: handle.seq, duplicate: true });
      const following = collect(blindHandle.events(), () => false);
      gates.open('ev-lost');
      await expect(handle.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ status: 'completed' });
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<never>((_, reject) => {
        // 2 × recheckMs (2 s until the queue passes its own to events()) plus slack.
        timer = setTimeout(() => reject(new Error('handle.events() did not end after the input settled')), 15_000);
      });
      try {
        expect(await Promise.race([following, expired])).toEqual([]);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      await blind.close();
      // The other queue's BullMQ keys (its meta): the fixture cleans only its own queue's.
      await fleet.deleteKeys(`bull:${fleet.config.queueName}_y:*`);
      await fleet.deleteKeys(`${fleet.config.queueName}_y:*`);
    }
  });

  it('handle.events() of a session whose first event is its own input_accepted reports no gap', async () => {
    const handle = await queue.add('send', { sessionId: 'ev-first', input: 'first' });
    const items = await collect(handle.events(), () => false);
    expect(items.map((item) => (item.kind === 'event' ? item.type : 'gap'))[0]).toBe('input_accepted');
    expect(items.some((item) => item.kind === 'gap')).toBe(false);
  });

  describe('handle.events() of a duplicate add, when the stream was trimmed past the input’s start', () => {
    /** Trims the session's stream up to the input's `input_started` entry (its `input_accepted` goes); that entry's id. */
    async function trimToStarted(sessionId: string, seq: number): Promise<string> {
      const streamKey = eventStreamKey(fleet.config.queueName, sessionId);
      const startedId = await fleet.waitFor('the input_started event', async () => {
        const entries = await readRange(fleet.redis, fleet.config.queueName, sessionId, { after: '0', count: 1000 });
        return entries.find((event) => event.type === 'input_started' && event.data.inputSeq === seq)?.id;
      });
      await fleet.redis.xtrim(streamKey, 'MINID', startedId);
      return startedId;
    }

    const expectLostStart = (items: StreamItem[], startedId: string) => {
      expect(items[0]).toEqual({ kind: 'gap', after: '0', firstAvailable: startedId, resumeFrom: previousStreamId(startedId) });
      expect(items.slice(1).every((item) => item.kind === 'event')).toBe(true);
      const types = events(items).map((event) => event.type);
      expect(types[0]).toBe('input_started');
      expect(types.at(-1)).toBe('input_finished');
    };

    it('an input that has settled: a gap, then what is left of its events', async () => {
      const first = await queue.add('send', { sessionId: 'ev-trimmed', input: 'trimmed' }, { inputId: 'ev-trimmed-1' });
      await first.result({ timeoutMs: 20_000 });
      const startedId = await trimToStarted('ev-trimmed', first.seq);
      const again = await queue.add('send', { sessionId: 'ev-trimmed', input: 'trimmed' }, { inputId: 'ev-trimmed-1' });
      expect(again).toMatchObject({ seq: first.seq, duplicate: true });
      expectLostStart(await collect(again.events(), () => false), startedId);
    });

    it('an input still running: a gap, then its events as they come', async () => {
      const first = await queue.add('send', { sessionId: 'ev-trimmed-live', input: 'hold:ev-trimmed-live' }, { inputId: 'ev-trimmed-live-1' });
      const startedId = await trimToStarted('ev-trimmed-live', first.seq);
      const again = await queue.add('send', { sessionId: 'ev-trimmed-live', input: 'hold:ev-trimmed-live' }, { inputId: 'ev-trimmed-live-1' });
      const following = collect(again.events(), () => false);
      gates.open('ev-trimmed-live');
      const items = await following;
      expectLostStart(items, startedId);
      expect(events(items).some((event) => event.type === 'stream_delta')).toBe(true);
    });
  });

  it('subscribe with after resumes without loss', async () => {
    const sessionId = 'sub-1';
    await queue.add('send', { sessionId, input: 'one' });
    await fleet.waitForSessionIdle(sessionId, 1);
    const all = await collect(queue.subscribe(sessionId, { after: '0' }), (item) => item.kind === 'event' && item.type === 'input_finished');
    const cut = events(all)[3]!;
    await queue.add('send', { sessionId, input: 'two' });
    const rest = await collect(queue.subscribe(sessionId, { after: cut.id }), (item) => item.kind === 'event' && item.type === 'input_finished' && item.data.inputSeq === 2);
    expect(rest.some((item) => item.kind === 'gap')).toBe(false);
    const seqs = [...events(all).slice(0, 4), ...events(rest)].map((event) => event.data.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  });

  it('many result() waits at once are normal: no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const handle = await queue.add('send', { sessionId: 'many-waits', input: 'hold:many-waits' });
      const waits = Array.from({ length: 20 }, () => handle.result({ timeoutMs: 20_000 }));
      await fleet.waitFor('the run to start', async () => ((await fleet.store.getInput('many-waits', 1))?.status === 'running' ? true : undefined));
      gates.open('many-waits');
      for (const outcome of await Promise.all(waits)) expect(outcome).toMatchObject({ status: 'completed' });
      // Node emits the warning on a later tick: let one pass before looking.
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('serves every result() wait of a queue on one subscribed connection, whatever the number of waits and sessions', async () => {
    const name = `result-waits-${process.pid}`;
    const own = new Redis(fleet.config.redisUrl, { connectionName: name });
    const waiting = new SessionQueue({ redis: own, databaseUrl: fleet.config.databaseUrl, queueName: fleet.config.queueName, recheckMs: 60_000 });
    const connections = async (): Promise<number> => ((await fleet.redis.client('LIST')) as string).split('\n').filter((line) => line.includes(` name=${name} `)).length;
    try {
      const sessions = Array.from({ length: 12 }, (_, i) => `one-conn-${i}`);
      const handles = await Promise.all(sessions.map((sessionId) => waiting.add('send', { sessionId, input: `hold:${sessionId}` })));
      const waits = handles.flatMap((handle) => [handle.result({ timeoutMs: 20_000 }), handle.result({ timeoutMs: 20_000 })]);
      await fleet.waitFor('every wait to subscribe', async () => {
        const [, count] = (await fleet.redis.pubsub('NUMSUB', finishChannel(fleet.config.queueName, sessions.at(-1)!))) as [string, number];
        return count === 1 ? true : undefined;
      });
      // The queue's own connection, the event publisher's and the finish announcements': 24 waits add one.
      expect(await connections()).toBe(3);
      for (const sessionId of sessions) gates.open(sessionId);
      const outcomes = await Promise.all(waits);
      expect(outcomes.map((outcome) => outcome.finalText)).toEqual(sessions.flatMap((sessionId) => [`held ${sessionId}`, `held ${sessionId}`]));
    } finally {
      await waiting.close();
      own.disconnect();
    }
  });

  it('follows every subscribe() and handle.events() of a queue on two connections, whatever the number of followers and sessions', async () => {
    const name = `followers-${process.pid}`;
    const own = new Redis(fleet.config.redisUrl, { connectionName: name });
    const following = new SessionQueue({ redis: own, databaseUrl: fleet.config.databaseUrl, queueName: fleet.config.queueName, recheckMs: 60_000 });
    const connections = async (): Promise<number> => ((await fleet.redis.client('LIST')) as string).split('\n').filter((line) => line.includes(` name=${name} `)).length;
    const done = new AbortController();
    try {
      const sessions = Array.from({ length: 12 }, (_, i) => `followed-${i}`);
      const handles = await Promise.all(sessions.map((sessionId) => following.add('send', { sessionId, input: `hold:${sessionId}` })));
      /** Each session's events until its input's finish: one subscription and one handle's events per session. */
      const untilFinished = async (items: AsyncIterable<StreamItem>): Promise<string[]> => {
        const types: string[] = [];
        for await (const item of items) {
          types.push(item.kind === 'gap' ? 'gap' : item.type);
          if (item.kind === 'event' && item.type === 'input_finished') break;
        }
        return types;
      };
      const followed = handles.flatMap((handle) => [
        untilFinished(following.subscribe(handle.sessionId, { after: '0', signal: done.signal })),
        untilFinished(handle.events({ signal: done.signal })),
      ]);
      for (const sessionId of sessions) {
        await fleet.waitFor(`${sessionId}'s followers to subscribe`, async () => {
          const [, count] = (await fleet.redis.pubsub('NUMSUB', tailChannel(fleet.config.queueName, sessionId))) as [string, number];
          return count === 1 ? true : undefined;
        });
      }
      // The queue's own connection, the event publisher's, the subscribed one and the reading one: 24 followers add two.
      expect(await connections()).toBe(4);
      for (const sessionId of sessions) gates.open(sessionId);
      for (const types of await Promise.all(followed)) {
        expect(types[0]).toBe('input_accepted');
        expect(types.at(-1)).toBe('input_finished');
        expect(types).not.toContain('gap');
      }
    } finally {
      done.abort();
      await following.close();
      own.disconnect();
    }
  });

  it('lets go of a subscribe() or handle.events() piped into a stream the moment the stream is destroyed, with no event to wait for (Readable.from)', async () => {
    // A gateway pipes a subscription into a response and destroys the stream when its client goes:
    // Readable.from calls return() while a next() waits on a quiet stream. The follower must let go
    // then, not at the session's next event (which may be hours away).
    const sessionId = 'piped-away';
    const handle = await queue.add('send', { sessionId, input: `hold:${sessionId}` });
    const followers = async (): Promise<number> => ((await fleet.redis.pubsub('NUMSUB', tailChannel(fleet.config.queueName, sessionId))) as [string, number])[1];
    try {
      for (const items of [queue.subscribe(sessionId), handle.events()]) {
        const stream = Readable.from(items);
        stream.resume();
        await fleet.waitFor('the follower to subscribe', async () => ((await followers()) === 1 ? true : undefined));
        const closed = once(stream, 'close');
        stream.destroy();
        await closed;
        await fleet.waitFor('the follower to unsubscribe', async () => ((await followers()) === 0 ? true : undefined));
      }
    } finally {
      gates.open(sessionId);
    }
    expect(await handle.result({ timeoutMs: 20_000 })).toMatchObject({ status: 'completed' });
  });

  it('lets go of a subscribe() or handle.events() when its `await using` scope is left while a loop over it waits for news', async () => {
    const sessionId = 'disposed-scope';
    const handle = await queue.add('send', { sessionId, input: `hold:${sessionId}` });
    const followers = async (): Promise<number> => ((await fleet.redis.pubsub('NUMSUB', tailChannel(fleet.config.queueName, sessionId))) as [string, number])[1];
    try {
      for (const open of [() => queue.subscribe(sessionId), () => handle.events()]) {
        let reading: Promise<void> | undefined;
        {
          await using items = open();
          // The loop ends only when the subscription does: the input is held, no input_finished comes.
          reading = (async () => {
            for await (const item of items) void item;
          })();
          await fleet.waitFor('the follower to subscribe', async () => ((await followers()) === 1 ? true : undefined));
        }
        await reading;
        await fleet.waitFor('the follower to unsubscribe', async () => ((await followers()) === 0 ? true : undefined));
      }
    } finally {
      gates.open(sessionId);
    }
    expect(await handle.result({ timeoutMs: 20_000 })).toMatchObject({ status: 'completed' });
  });

  it("links a subscription's signal to the queue's close while it runs, and unlinks it when it ends (no AbortSignal.any)", async () => {
    const sessionId = 'sub-linked';
    await queue.add('send', { sessionId, input: 'one' });
    await fleet.waitForSessionIdle(sessionId, 1);
    const own = new AbortController();
    const listeners = () => getEventListeners(own.signal, 'abort').length;
    for (let round = 0; round < 3; round += 1) {
      for await (const item of queue.subscribe(sessionId, { after: '0', signal: own.signal })) {
        expect(item.kind).toBe('event');
        // One listener on it, the link's (the reader listens on the linked signal).
        expect(listeners()).toBe(1);
        break;
      }
      expect(listeners()).toBe(0);
    }
    // Aborting the caller's signal still ends a blocked read at once.
    const pending = queue.subscribe(sessionId, { signal: own.signal })[Symbol.asyncIterator]().next();
    own.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('creates, reads and deletes sessions; reports history and stats', async () => {
    const created = await queue.sessions.create({ id: 'crud-1', systemPrompt: 'Be brief.', metadata: { team: 'a' }, agent: 'default' });
    expect(created).toMatchObject({ id: 'crud-1', systemPrompt: 'Be brief.', metadata: { team: 'a' }, agent: 'default', nextSeq: 0 });
    await expect(queue.sessions.create({ id: 'crud-1' })).rejects.toMatchObject({ code: 'session.exists' });
    await (await queue.add('send', { sessionId: 'crud-1', input: 'hi' })).result({ timeoutMs: 20_000 });
    expect((await queue.sessions.get('crud-1'))?.systemPrompt).toBe('Be brief.');
    const history = await queue.history('crud-1');
    expect(history.map((row) => [row.message.role, row.message.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Echo: hi'],
    ]);
    const stats = await queue.stats('crud-1');
    expect(stats).toMatchObject({ sessionId: 'crud-1', status: 'idle', inputs: { total: 1, done: 1, pending: 0, running: 0, failed: 0, cancelled: 0 } });
    expect(stats.totals).toMatchObject({ inputs: 1, rounds: 1, llmCalls: 1 });
    const keys = [eventStreamKey, eventSeqKey, eventFinishedKey].map((key) => key(fleet.config.queueName, 'crud-1'));
    await fleet.waitFor('the input_finished written', async () => ((await fleet.redis.zscore(keys[2]!, '1')) !== null ? true : undefined));
    expect(await fleet.redis.exists(...keys)).toBe(3);
    expect(await queue.sessions.delete('crud-1')).toBe(true);
    expect(await queue.sessions.get('crud-1')).toBeNull();
    expect(await fleet.redis.exists(...keys)).toBe(0);
    expect(await queue.sessions.delete('crud-1')).toBe(false);
    await expect(queue.history('crud-1')).rejects.toMatchObject({ code: 'session.not_found' });
    await expect(queue.stats('crud-1')).rejects.toMatchObject({ code: 'session.not_found' });
    await expect(queue.result('crud-1', 1)).rejects.toMatchObject({ code: 'session.not_found' });
  });
});
