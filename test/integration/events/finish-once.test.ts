import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeEvent } from '../../../src/events/event-body.js';
import { RedisEventPublisher } from '../../../src/events/event-publisher.js';
import type { FleetEvent } from '../../../src/fleet/fleet-events.js';
import { expiryRefreshMs, FINISHES_KEPT, publishEventsCommand } from '../../../src/events/publish-events-script.js';
import { eventDeletedKey, eventFinishedKey, eventSeqKey, eventStreamKey, finishChannel } from '../../../src/fleet/fleet-keys.js';
import { finishedEvent, openEventsFixture, type EventsFixture } from './events-fixture.js';

type Entry = [string, string[]];
interface Data {
  seq: number;
  inputSeq: number | null;
  steeredInto?: number;
  finalText?: string;
}

const finished = finishedEvent;
const resumed: FleetEvent = { type: 'input_resumed', reason: 'worker_lost', attempt: 2, agent: { name: 'default', version: 'v1' } };
const round = (roundIndex: number): FleetEvent => ({ type: 'round_started', roundIndex });

/**
 * I6 in the publish script: an input's `input_finished` reaches its session's stream at most once,
 * whoever publishes it and however often (a holder stalled past its lease wakes up after the next
 * holder republished the event), without a hole in `seq`.
 */
describe('the publish script writes one input_finished per input', () => {
  let fx: EventsFixture;
  let redis: Redis;

  beforeAll(() => {
    fx = openEventsFixture('events_finish_once');
    redis = fx.connect();
  });

  afterAll(async () => {
    await fx.close();
  });

  const stream = async (sessionId: string) =>
    ((await redis.xrange(eventStreamKey(fx.queue, sessionId), '-', '+')) as Entry[]).map(([id, fields]) => ({ id, type: fields[1]!, data: JSON.parse(fields[3]!) as Data }));
  const finishes = async (sessionId: string) => (await stream(sessionId)).filter((entry) => entry.type === 'input_finished').map((entry) => [entry.data.inputSeq, entry.data.finalText]);
  const gapless = async (sessionId: string) => {
    const seqs = (await stream(sessionId)).map((entry) => entry.data.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  };

  it("writes an input's input_finished once: a second publish, in a later call or in the same batch, is left out, resolves '' and takes no seq", async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue });
    const sessionId = fx.sessionId('twice');
    const first = await publisher.publish(sessionId, 1, finished('first'));
    expect(await publisher.publish(sessionId, 1, finished('late copy'))).toBe('');
    const sent = vi.spyOn(redis, 'sendCommand');
    // One turn: one batch, one script call, with input 2's finish in it twice.
    const both = [publisher.publish(sessionId, 2, finished('second')), publisher.publish(sessionId, 2, finished('second again')), publisher.publish(sessionId, 3, round(0))];
    const ids = await Promise.all(both);
    expect(sent.mock.calls.filter(([command]) => command.name === 'evalsha')).toHaveLength(1);
    sent.mockRestore();
    expect(ids[0]).not.toBe('');
    expect(ids[1]).toBe('');
    expect(ids[2]).not.toBe('');
    await publisher.close();

    const entries = await stream(sessionId);
    expect(entries.map((entry) => entry.id)).toEqual([first, ids[0], ids[2]]);
    expect(await finishes(sessionId)).toEqual([
      [1, 'first'],
      [2, 'second'],
    ]);
    await gapless(sessionId);
    expect(await redis.get(eventSeqKey(fx.queue, sessionId))).toBe('3');
    expect(await redis.zrange(eventFinishedKey(fx.queue, sessionId), 0, -1, 'WITHSCORES')).toEqual(['1', '1', '2', '2']);
    expect([publisher.published, publisher.duplicateFinishes, publisher.dropped]).toEqual([3, 2, 0]);
  });

  it('announces each finish it writes on the session\'s finish channel, as "<id> <data>", and none it leaves out or any other event', async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue });
    const sessionId = fx.sessionId('announced');
    const listener = fx.connect();
    const heard: [string, string][] = [];
    listener.on('message', (channel: string, message: string) => heard.push([channel, message]));
    await listener.subscribe(finishChannel(fx.queue, sessionId), finishChannel(fx.queue, `${sessionId}-other`));
    await publisher.publish(sessionId, 1, round(0));
    const id = await publisher.publish(sessionId, 1, finished('announced'));
    expect(await publisher.publish(sessionId, 1, finished('late copy'))).toBe('');
    await publisher.publish(`${sessionId}-other`, 1, round(0));
    await publisher.close();
    // A PING answered after the script calls: every message they caused has arrived before it.
    await listener.ping();
    const [entry] = (await stream(sessionId)).filter((written) => written.type === 'input_finished');
    expect(heard).toHaveLength(1);
    expect(heard[0]![0]).toBe(finishChannel(fx.queue, sessionId));
    expect(heard[0]![0]).toBe(`${eventStreamKey(fx.queue, sessionId)}:finishes`);
    const [announcedId, data] = [heard[0]![1].slice(0, heard[0]![1].indexOf(' ')), heard[0]![1].slice(heard[0]![1].indexOf(' ') + 1)];
    expect(announcedId).toBe(id);
    expect(JSON.parse(data)).toEqual(entry!.data);
    expect(entry!.data).toMatchObject({ seq: 2, inputSeq: 1, finalText: 'announced' });
  });

  it("forgets the finishes of an earlier session under the same id when input 1 is accepted again (a delete whose Redis part failed)", async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue });
    const sessionId = fx.sessionId('again');
    const accepted: FleetEvent = { type: 'input_accepted', kind: 'send', mode: 'queue', inputId: 'i-1' };
    await publisher.publish(sessionId, 1, accepted);
    await publisher.publish(sessionId, 1, finished('old session'));
    await publisher.publish(sessionId, 2, finished('old session, input 2'));
    // The session is deleted in Postgres but its keys stay; one of the same id starts over.
    expect(await publisher.publish(sessionId, 1, accepted)).not.toBe('');
    expect(await redis.zcard(eventFinishedKey(fx.queue, sessionId))).toBe(0);
    expect(await publisher.publish(sessionId, 1, finished('new session'))).not.toBe('');
    // Input 2 of the new session is not taken for the old one's either; only its own late copy is.
    expect(await publisher.publish(sessionId, 2, finished('new session, input 2'))).not.toBe('');
    expect(await publisher.publish(sessionId, 1, finished('late copy'))).toBe('');
    await publisher.close();
    expect((await finishes(sessionId)).slice(2)).toEqual([
      [1, 'new session'],
      [2, 'new session, input 2'],
    ]);
    await gapless(sessionId);
  });

  it("never leaves out other events: two input_resumed of one input, another input's finish and each steered input's finish are all written", async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue });
    const sessionId = fx.sessionId('others');
    const sink = publisher.runSink(sessionId, 1);
    sink.emit(resumed);
    sink.emit(resumed);
    await sink.close();
    await publisher.publish(sessionId, 1, finished('host'));
    // Steered inputs finish with their host, each under its own seq; a republished copy is left out.
    await publisher.publish(sessionId, 2, finished('host', 1));
    await publisher.publish(sessionId, 3, finished('host', 1));
    expect(await publisher.publish(sessionId, 2, finished('host', 1))).toBe('');
    await publisher.publish(sessionId, 4, finished('next'));
    await publisher.close();

    const entries = await stream(sessionId);
    expect(entries.map((entry) => [entry.type, entry.data.inputSeq, entry.data.steeredInto ?? null])).toEqual([
      ['input_resumed', 1, null],
      ['input_resumed', 1, null],
      ['input_finished', 1, null],
      ['input_finished', 2, 1],
      ['input_finished', 3, 1],
      ['input_finished', 4, null],
    ]);
    await gapless(sessionId);
  });

  it("answers '' in a left-out finish's place, so every session's ids still line up with its entries", async () => {
    const publish = publishEventsCommand(redis, { maxLen: 100, idleExpirySeconds: 300 });
    const [a, b] = [fx.sessionId('lineup-a'), fx.sessionId('lineup-b')];
    const target = (sessionId: string) => ({ streamKey: eventStreamKey(fx.queue, sessionId), seqKey: eventSeqKey(fx.queue, sessionId), finishedKey: eventFinishedKey(fx.queue, sessionId), deletedKey: eventDeletedKey(fx.queue, sessionId) });
    const entries = (sessionId: string) => [encodeEvent(sessionId, 1, round(0)), encodeEvent(sessionId, 1, finished('x')), encodeEvent(sessionId, 1, finished('y')), encodeEvent(sessionId, 2, round(1))];
    const [partA, partB] = await publish([
      // Ids not asked for: a batch with a finish is answered with them anyway.
      { target: target(a), entries: entries(a), skip: 0, report: false, refreshExpiry: true },
      { target: target(b), entries: entries(b), skip: 2, report: true, refreshExpiry: true },
    ]);
    for (const part of [partA, partB]) {
      if (!Array.isArray(part)) throw part ?? new Error('no part');
      expect(part.map((id) => id === '')).toEqual([false, false, true, false]);
    }
    expect((await stream(a)).map((entry) => entry.data.seq)).toEqual([1, 2, 3]);
    // `skip` still burns its numbers first: the hole is the lost events', not the left-out finish's.
    expect((await stream(b)).map((entry) => entry.data.seq)).toEqual([3, 4, 5]);
  });

  it('does not mark a finish Redis refused to write: once the stream key is fixed, the finish is written', async () => {
    const errors: string[] = [];
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, onError: (error) => errors.push(error.message) });
    const sessionId = fx.sessionId('refused');
    await redis.set(eventStreamKey(fx.queue, sessionId), 'not a stream');
    await expect(publisher.publish(sessionId, 1, finished('refused'))).rejects.toMatchObject({ code: 'system.infrastructure' });
    expect(errors).toHaveLength(1);
    expect(await redis.zscore(eventFinishedKey(fx.queue, sessionId), '1')).toBeNull();
    await redis.del(eventStreamKey(fx.queue, sessionId));
    const id = await publisher.publish(sessionId, 1, finished('repaired'));
    expect(id).not.toBe('');
    expect(await finishes(sessionId)).toEqual([[1, 'repaired']]);
    // The refused write's number was taken (and its loss burned again): the hole tells subscribers.
    expect((await stream(sessionId)).map((entry) => entry.data.seq)).toEqual([3]);
    await publisher.close();
  });

  it("fails only that session's part when its finished set has the wrong type, taking no seq", async () => {
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, onError: () => undefined });
    const sessionId = fx.sessionId('bad-set');
    await publisher.publish(sessionId, 1, round(0));
    await redis.set(eventFinishedKey(fx.queue, sessionId), 'not a set');
    await expect(publisher.publish(sessionId, 1, finished('lost'))).rejects.toMatchObject({ code: 'system.infrastructure' });
    expect(await redis.get(eventSeqKey(fx.queue, sessionId))).toBe('1');
    await publisher.close();
  });

  it(`keeps the finished set to the newest ${FINISHES_KEPT} inputs and expires it with the stream`, async () => {
    let clock = 1_000_000;
    const publisher = new RedisEventPublisher(redis, { queueName: fx.queue, idleExpirySeconds: 300, now: () => clock });
    const sessionId = fx.sessionId('bounded');
    const total = FINISHES_KEPT + 5;
    for (let seq = 1; seq <= total; seq += 1) {
      publisher.runSink(sessionId, seq).emit(finished(`#${seq}`));
      if (seq % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await publisher.flush();
    const key = eventFinishedKey(fx.queue, sessionId);
    expect(await redis.zcard(key)).toBe(FINISHES_KEPT);
    expect(await redis.zrange(key, 0, 0)).toEqual(['6']);
    expect(await redis.zrange(key, -1, -1)).toEqual([String(total)]);
    expect(await redis.xlen(eventStreamKey(fx.queue, sessionId))).toBe(total);
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    // A later write of the session (not only a finish) pushes the set's expiry back with the stream's,
    // once the publisher's refresh interval (a tenth of the expiry here) has passed.
    await redis.expire(key, 5);
    clock += expiryRefreshMs(300);
    await publisher.publish(sessionId, total, round(0));
    expect(await redis.ttl(key)).toBeGreaterThan(5);
    expect(await redis.ttl(eventStreamKey(fx.queue, sessionId))).toBeGreaterThan(5);
    await publisher.close();
  });
});
