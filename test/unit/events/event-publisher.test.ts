import { describe, expect, it, vi } from 'vitest';
import { IDLE_CHANNELS_KEPT, RedisEventPublisher } from '../../../src/events/event-publisher.js';
import type { EventPublishErrorContext, EventPublisherOptions } from '../../../src/events/event-publisher-options.js';
import type { FleetEvent } from '../../../src/fleet/fleet-events.js';
import { expiryRefreshMs } from '../../../src/events/publish-events-script.js';
import { FakeScriptRedis } from './fake-script-redis.js';

const round = (roundIndex: number): FleetEvent => ({ type: 'round_started', roundIndex });
const delta = (text: string): FleetEvent => ({ type: 'stream_delta', streamId: 'st', text });

function setup(options: Partial<EventPublisherOptions> = {}) {
  const redis = new FakeScriptRedis();
  const errors: { error: Error; context: EventPublishErrorContext }[] = [];
  const publisher = new RedisEventPublisher(redis.asRedis(), {
    queueName: 'q',
    onError: (error, context) => errors.push({ error, context }),
    ...options,
  });
  return { redis, errors, publisher };
}

const seqs = (redis: FakeScriptRedis, key = 'q:events:s1') =>
  (redis.streams.get(key) ?? []).map((entry) => (JSON.parse(entry.data) as { seq: number }).seq);

describe('RedisEventPublisher (write-behind, against a fake script)', () => {
  it('writes everything emitted in one tick as one script call, in order, on the documented keys', async () => {
    const { redis, publisher } = setup();
    const sink = publisher.runSink('s1', 3);
    for (let i = 0; i < 5; i += 1) expect(sink.emit(round(i))).toBeUndefined();
    expect(redis.calls).toHaveLength(0);
    await sink.flush();
    expect(redis.calls).toHaveLength(1);
    expect(redis.calls[0]).toMatchObject({ streamKey: 'q:events:s1', seqKey: 'q:events:s1:seq', finishedKey: 'q:events:s1:finished', maxLen: 10_000, ttl: 604_800, kept: 1_000, skip: 0 });
    expect(redis.calls[0]?.entries.map((e) => e.finishes)).toEqual(['', '', '', '', '']);
    expect(redis.calls[0]?.entries.map((e) => JSON.parse(e.data) as unknown)).toEqual(
      [0, 1, 2, 3, 4].map((i) => ({ seq: i + 1, sessionId: 's1', inputSeq: 3, roundIndex: i })),
    );
    expect(publisher.published).toBe(5);
  });

  it('shares one call among the sessions ready in a turn; keeps one batch in flight per session; what arrives meanwhile forms the next', async () => {
    const { redis, publisher } = setup();
    const a = publisher.runSink('s1', 1);
    const b = publisher.runSink('s2', 1);
    redis.hold();
    a.emit(round(0));
    b.emit(round(0));
    await vi.waitFor(() => expect(redis.waiting).toBe(1));
    for (let i = 1; i <= 3; i += 1) a.emit(round(i));
    await new Promise((resolve) => setImmediate(resolve));
    // s1's next batch waits for its first: nothing else is sent while the call is held.
    expect(redis.waiting).toBe(1);
    redis.release();
    await Promise.all([a.flush(), b.flush()]);
    expect(redis.calls.map((c) => [c.call, c.streamKey, c.entries.length])).toEqual([
      [0, 'q:events:s1', 1],
      [0, 'q:events:s2', 1],
      [1, 'q:events:s1', 3],
    ]);
    expect(redis.invocations).toBe(2);
    expect(seqs(redis)).toEqual([1, 2, 3, 4]);
    expect(seqs(redis, 'q:events:s2')).toEqual([1]);
  });

  it('a session whose part Redis refuses loses only its own events; the others in the call apply', async () => {
    const { redis, errors, publisher } = setup();
    redis.refuse.set('q:events:s2', 'WRONGTYPE Operation against a key holding the wrong kind of value');
    const sinks = ['s1', 's2', 's3'].map((id) => publisher.runSink(id, 1));
    for (const sink of sinks) sink.emit(round(0));
    const rejected = publisher.publish('s2', 1, round(1));
    await expect(rejected).rejects.toMatchObject({ code: 'system.infrastructure', message: expect.stringContaining('WRONGTYPE') });
    await publisher.flush();
    expect(redis.invocations).toBe(1);
    expect(seqs(redis, 'q:events:s1')).toEqual([1]);
    expect(seqs(redis, 'q:events:s3')).toEqual([1]);
    expect(publisher.published).toBe(2);
    expect(publisher.dropped).toBe(2);
    expect(errors.map((e) => e.context)).toEqual([{ sessionId: 's2', stage: 'write', events: 2, types: ['round_started', 'round_started'] }]);
    // Once Redis takes the stream again, its next write burns the lost numbers: subscribers see the hole.
    redis.refuse.clear();
    sinks[1]!.emit(round(2));
    await publisher.flush();
    expect(seqs(redis, 'q:events:s2')).toEqual([3]);
  });

  it('a call that fails as a whole fails every session in it', async () => {
    const { redis, errors, publisher } = setup();
    redis.failNext = new Error('Connection is closed.');
    publisher.runSink('s1', 1).emit(round(0));
    publisher.runSink('s2', 1).emit(round(0));
    await publisher.flush();
    expect(redis.invocations).toBe(1);
    expect(errors.map((e) => [e.context.sessionId, e.error.message])).toEqual([
      ['s1', expect.stringContaining('Connection is closed.')],
      ['s2', expect.stringContaining('Connection is closed.')],
    ]);
    expect(publisher.dropped).toBe(2);
  });

  it('starts a new call once the sessions taken reach about a megabyte of bodies', async () => {
    const { redis, publisher } = setup();
    const big = (i: number): FleetEvent => ({ type: 'tool_call_completed', name: 'n', toolCallId: `c${i}`, toolInput: {}, output: 'x'.repeat(400_000), failed: false, durationMs: 1 });
    for (let i = 0; i < 4; i += 1) publisher.runSink(`s${i}`, 1).emit(big(i));
    await publisher.flush();
    expect(redis.calls.map((c) => c.call)).toEqual([0, 0, 0, 1]);
    expect(publisher.published).toBe(4);
  });

  it("stamps each entry with its own input's seq when one session's events of several inputs interleave", async () => {
    const { redis, publisher } = setup();
    publisher.runSink('s1', 1).emit(round(0));
    void publisher.publish('s1', null, { type: 'input_accepted', kind: 'send', mode: 'queue', inputId: 'i-2' });
    publisher.runSink('s1', 2).emit(round(0));
    publisher.runSink('s1', 1).emit(round(1));
    await publisher.flush();
    expect((redis.streams.get('q:events:s1') ?? []).map((entry) => (JSON.parse(entry.data) as { inputSeq: number | null }).inputSeq)).toEqual([1, null, 2, 1]);
  });

  it('splits a burst into calls of at most maxBatchEvents', async () => {
    const { redis, publisher } = setup({ maxBatchEvents: 4 });
    const sink = publisher.runSink('s1', 1);
    for (let i = 0; i < 10; i += 1) sink.emit(round(i));
    await sink.flush();
    expect(redis.calls.map((c) => c.entries.length)).toEqual([4, 4, 2]);
    expect(seqs(redis)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('also splits a batch once its bodies reach about a megabyte', async () => {
    const { redis, publisher } = setup();
    const sink = publisher.runSink('s1', 1);
    const big = (i: number): FleetEvent => ({ type: 'tool_call_completed', name: 'n', toolCallId: `c${i}`, toolInput: {}, output: 'x'.repeat(600_000), failed: false, durationMs: 1 });
    for (let i = 0; i < 3; i += 1) sink.emit(big(i));
    await sink.flush();
    expect(redis.calls.map((c) => c.entries.length)).toEqual([2, 1]);
  });

  it('publish() goes after everything queued, pending deltas included, and resolves with its stream id', async () => {
    const { redis, publisher } = setup();
    const sink = publisher.runSink('s1', 1);
    sink.emit(delta('a'));
    sink.emit(delta('b'));
    const id = await publisher.publish('s1', 1, { type: 'input_started', attempt: 1, agent: { name: 'default', version: 'v1' } });
    const stream = redis.streams.get('q:events:s1') ?? [];
    expect(stream.map((e) => e.type)).toEqual(['stream_delta', 'input_started']);
    expect(stream[1]?.id).toBe(id);
    expect(publisher.coalesced).toBe(1);
  });

  it('asks for stream ids only for a batch someone awaits or with a finish, and for the expiry once per refresh interval', async () => {
    let clock = 5_000_000;
    const { redis, publisher } = setup({ idleExpirySeconds: 300, now: () => clock });
    const sink = publisher.runSink('s1', 1);
    sink.emit(round(0));
    await sink.flush();
    sink.emit(round(1));
    await sink.flush();
    await publisher.publish('s1', 1, round(2));
    sink.emit({ type: 'input_finished', status: 'completed', finalText: '', rounds: 1, toolCalls: 0, usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 1, costUsd: 0, costPicoUsd: 0 }, error: null });
    await sink.flush();
    clock += expiryRefreshMs(300) - 1;
    sink.emit(round(3));
    await sink.flush();
    clock += 1;
    sink.emit(round(4));
    await sink.flush();
    // The first write pushes the expiry back, the next within 30 s do not; publish() and the finish get ids.
    expect(redis.calls.map((call) => call.flags)).toEqual(['e', '', 'r', 'r', '', 'e']);
    expect(publisher.published).toBe(6);
    expect(seqs(redis)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("sends the script's text once per connection, then its SHA; a NOSCRIPT answer sends the call again with the text", async () => {
    const { redis, publisher } = setup();
    const sink = publisher.runSink('s1', 1);
    for (let i = 0; i < 4; i += 1) {
      if (i === 2) redis.flushScripts = true;
      sink.emit(round(i));
      await sink.flush();
    }
    expect(redis.names).toEqual(['eval', 'evalsha', 'evalsha', 'eval', 'evalsha']);
    // The refused call wrote nothing; its resend wrote each entry once.
    expect(seqs(redis)).toEqual([1, 2, 3, 4]);
    expect(publisher.dropped).toBe(0);
  });

  it("passes an input_finished's input seq to the script, resolves publish() with '' for a finish left out, and counts it apart from published", async () => {
    const { redis, publisher } = setup();
    const finished = (steeredInto?: number): FleetEvent => ({
      type: 'input_finished',
      status: 'completed',
      finalText: 'done',
      rounds: 1,
      toolCalls: 0,
      usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 1, costUsd: 0, costPicoUsd: 0 },
      error: null,
      ...(steeredInto === undefined ? {} : { steeredInto }),
    });
    const first = await publisher.publish('s1', 1, finished());
    const steered = await publisher.publish('s1', 2, finished(1));
    const late = await publisher.publish('s1', 1, finished());
    expect(first).not.toBe('');
    expect(steered).not.toBe('');
    expect(late).toBe('');
    expect(redis.calls.map((c) => c.entries.map((e) => e.finishes))).toEqual([['1'], ['2'], ['1']]);
    expect(seqs(redis)).toEqual([1, 2]);
    expect(publisher.published).toBe(2);
    expect(publisher.duplicateFinishes).toBe(1);
    expect(publisher.dropped).toBe(0);
  });

  it('releases a pending delta when its window ends, without any flush', async () => {
    const { redis, publisher } = setup({ coalesceMs: 5 });
    const sink = publisher.runSink('s1', 1);
    sink.emit(delta('x'));
    sink.emit(delta('y'));
    await vi.waitFor(() => expect(redis.calls).toHaveLength(1), { timeout: 2000, interval: 5 });
    expect(JSON.parse(redis.calls[0]?.entries[0]?.data ?? '{}')).toMatchObject({ text: 'xy' });
  });

  it('reports a failed batch, counts it as dropped, keeps going, and burns its seq numbers in the next write', async () => {
    const { redis, errors, publisher } = setup();
    const sink = publisher.runSink('s1', 1);
    redis.failNext = new Error('READONLY You can not write against a read only replica.');
    sink.emit(round(0));
    sink.emit(round(1));
    await sink.flush();
    expect(publisher.dropped).toBe(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.error).toMatchObject({ code: 'system.infrastructure', message: expect.stringContaining('READONLY') });
    expect(errors[0]?.context).toEqual({ sessionId: 's1', stage: 'write', events: 2, types: ['round_started', 'round_started'] });
    sink.emit(round(2));
    await sink.flush();
    expect(redis.calls[1]?.skip).toBe(2);
    expect(seqs(redis)).toEqual([3]);
    expect(publisher.published).toBe(1);
  });

  it('forgets a session whose writes failed like any idle one, and its next write after that still burns the lost numbers', async () => {
    const { redis, publisher } = setup();
    // Sessions whose only write fails (Redis refusing writes), more of them than the idle bound.
    const failed = Array.from({ length: IDLE_CHANNELS_KEPT + 50 }, (_, i) => publisher.runSink(`f${i}`, 1));
    redis.failNext = new Error('OOM command not allowed when used memory > maxmemory');
    for (const sink of failed) sink.emit(round(0));
    await Promise.all(failed.map((sink) => sink.flush()));
    expect(publisher.dropped).toBe(failed.length);
    // Until session 13 these were never idle: 1,074 channels kept for as long as the process ran.
    expect(publisher.sessionChannels).toBe(IDLE_CHANNELS_KEPT);
    // f0 was forgotten first; its next event takes seq 2, leaving the hole where the lost one was.
    const again = publisher.runSink('f0', 2);
    again.emit(round(1));
    await again.flush();
    expect(redis.calls.at(-1)).toMatchObject({ streamKey: 'q:events:f0', skip: 1 });
    expect(seqs(redis, 'q:events:f0')).toEqual([2]);
  });

  it("refuses a deleted session's events written under its lease: lease.lost, reported as fenced, and no seq burned for the session created again", async () => {
    const { redis, errors, publisher } = setup();
    // Lease 7 was the deleted session's last; lease 9 is the new session's under the same id.
    redis.deleted.set('q:deleted:s1', 7);
    const old = publisher.runSink('s1', 1, 7);
    old.emit(delta('late '));
    old.emit(round(1));
    await old.flush();
    await expect(publisher.publish('s1', 1, { type: 'input_finished', status: 'completed' } as FleetEvent, 7)).rejects.toMatchObject({ code: 'lease.lost' });
    expect(redis.streams.get('q:events:s1') ?? []).toEqual([]);
    expect(publisher.fenced).toBe(3);
    expect(publisher.dropped).toBe(3);
    expect(errors.map((e) => e.context.stage)).toEqual(['fenced', 'fenced']);
    // The new session's events, its producer's (no fence) and its worker's, start at seq 1: no hole.
    await publisher.publish('s1', 1, { type: 'input_accepted', kind: 'send', mode: 'queue', inputId: 'i-again' });
    const fresh = publisher.runSink('s1', 1, 9);
    fresh.emit(round(0));
    await fresh.flush();
    expect(seqs(redis)).toEqual([1, 2]);
    expect(redis.calls.map((c) => [c.fence, c.skip])).toEqual([
      ['7', 0],
      ['7', 0],
      ['', 0],
      ['9', 0],
    ]);
  });

  it("keeps owing the seq numbers of earlier losses when a deleted session's batch is refused: they may be the new session's", async () => {
    const { redis, publisher } = setup();
    redis.deleted.set('q:deleted:s1', 7);
    // The new session's event (a raw ingest's input_accepted, no lease) is lost...
    redis.failNext = new Error('connection reset');
    await expect(publisher.publish('s1', 1, { type: 'input_accepted', kind: 'send', mode: 'queue', inputId: 'i-1' })).rejects.toMatchObject({ code: 'system.infrastructure' });
    // ...then the old run's next write is refused...
    const old = publisher.runSink('s1', 1, 7);
    old.emit(round(5));
    await old.flush();
    expect(publisher.fenced).toBe(1);
    // ...and the new session's next write still leaves the hole where its lost event was.
    const fresh = publisher.runSink('s1', 1, 9);
    fresh.emit(round(0));
    await fresh.flush();
    expect(redis.calls.map((c) => [c.fence, c.skip])).toEqual([
      ['', 0],
      ['7', 1],
      ['9', 1],
    ]);
    expect(seqs(redis)).toEqual([2]);
  });

  it('never puts entries of two leases in one part, nor merges their deltas', async () => {
    const { redis, publisher } = setup();
    const old = publisher.runSink('s1', 1, 7);
    const fresh = publisher.runSink('s1', 1, 9);
    old.emit(delta('a'));
    fresh.emit(delta('b'));
    old.emit(delta('c'));
    await publisher.flush();
    expect(redis.calls.map((c) => [c.fence, c.entries.map((e) => (JSON.parse(e.data) as { text: string }).text)])).toEqual([
      ['7', ['a']],
      ['9', ['b']],
      ['7', ['c']],
    ]);
  });

  it('rejects publish() when its batch fails', async () => {
    const { redis, publisher } = setup();
    redis.failNext = new Error('boom');
    await expect(publisher.publish('s1', null, round(0))).rejects.toMatchObject({ code: 'system.infrastructure' });
  });

  it('drops an unserialisable or malformed event alone, reports it, and never throws from emit, even with a throwing reporter', async () => {
    const reported: { code: unknown; context: EventPublishErrorContext }[] = [];
    const { redis, publisher } = setup({
      onError: (error, context) => {
        reported.push({ code: (error as { code?: unknown }).code, context });
        throw new Error('a broken reporter');
      },
    });
    const sink = publisher.runSink('s1', 1);
    const bad = { type: 'tool_call_started', name: 'n', toolCallId: 'c', toolInput: 1n, attempt: 1 } as unknown as FleetEvent;
    expect(() => sink.emit(bad)).not.toThrow();
    expect(() => sink.emit(null as unknown as FleetEvent)).not.toThrow();
    sink.emit(round(0));
    await sink.flush();
    expect(reported.map((r) => [r.code, r.context.stage, r.context.types])).toEqual([
      ['internal', 'encode', ['tool_call_started']],
      ['internal', 'encode', ['undefined']],
    ]);
    expect(publisher.dropped).toBe(2);
    expect(redis.streams.get('q:events:s1')?.map((e) => e.type)).toEqual(['round_started']);
    // Only the unserialisable one reached the session's queue; its seq number is burned.
    expect(seqs(redis)).toEqual([2]);
  });

  it('drops beyond maxQueuedEvents while Redis is slow, reporting once per episode', async () => {
    const { redis, errors, publisher } = setup({ maxQueuedEvents: 3 });
    const sink = publisher.runSink('s1', 1);
    redis.hold();
    sink.emit(round(0));
    await vi.waitFor(() => expect(redis.waiting).toBe(1));
    for (let i = 1; i <= 6; i += 1) sink.emit(round(i));
    expect(publisher.dropped).toBe(3);
    expect(errors.map((e) => e.context.stage)).toEqual(['overflow']);
    redis.release();
    await sink.flush();
    expect(publisher.published).toBe(4);
  });

  it('close() on a sink flushes its pending delta, then refuses events; idempotent', async () => {
    const { redis, errors, publisher } = setup({ coalesceMs: 60_000 });
    const sink = publisher.runSink('s1', 1);
    sink.emit(delta('a'));
    sink.emit(delta('b'));
    const closing = sink.close();
    expect(sink.close()).toBe(closing);
    await closing;
    expect(redis.streams.get('q:events:s1')?.map((e) => JSON.parse(e.data) as unknown)).toEqual([
      { seq: 1, sessionId: 's1', inputSeq: 1, streamId: 'st', text: 'ab' },
    ]);
    sink.emit(round(9));
    expect(errors.map((e) => e.context.stage)).toEqual(['closed']);
  });

  it("keeps an idle session's queue for its next events, forgets the oldest idle ones beyond the bound, and never one in use", async () => {
    const { redis, publisher } = setup({ coalesceMs: 60_000 });
    const busy = publisher.runSink('busy', 1);
    busy.emit(round(0));
    await busy.flush();
    expect(publisher.sessionChannels).toBe(1);
    // In use again (an open delta) while more sessions than the bound go idle after it.
    busy.emit(delta('a'));
    const others = Array.from({ length: IDLE_CHANNELS_KEPT + 10 }, (_, i) => publisher.runSink(`s${i}`, 1));
    for (const sink of others) sink.emit(round(0));
    await Promise.all(others.map((sink) => sink.flush()));
    expect(publisher.sessionChannels).toBe(IDLE_CHANNELS_KEPT + 1);
    await busy.flush();
    expect(publisher.sessionChannels).toBe(IDLE_CHANNELS_KEPT);
    expect(seqs(redis, 'q:events:busy')).toEqual([1, 2]);
    expect(JSON.parse(redis.streams.get('q:events:busy')![1]!.data)).toMatchObject({ text: 'a' });
    expect(publisher.published).toBe(2 + others.length);
    expect(publisher.dropped).toBe(0);
  });

  it('close() on the publisher flushes every session, then refuses; quits the connection only when it owns it', async () => {
    const { redis, publisher } = setup({ coalesceMs: 60_000, ownsConnection: true });
    const quit = vi.fn(async () => 'OK');
    (redis as unknown as { quit: typeof quit }).quit = quit;
    publisher.runSink('s1', 1).emit(delta('x'));
    publisher.runSink('s2', 1).emit(round(0));
    await Promise.all([publisher.close(), publisher.close()]);
    expect(redis.streams.get('q:events:s1')).toHaveLength(1);
    expect(redis.streams.get('q:events:s2')).toHaveLength(1);
    expect(quit).toHaveBeenCalledTimes(1);
    await expect(publisher.publish('s1', 1, round(1))).rejects.toMatchObject({ code: 'state.conflict' });
    expect(publisher.dropped).toBe(1);
  });
});
