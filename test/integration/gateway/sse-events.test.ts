import type { EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { eventStreamKey, tailChannel } from '../../../src/fleet/fleet-keys.js';
import { openSse } from './fixtures/sse-client.js';
import { startStreamGateway, type StreamGateway } from './fixtures/stream-gateway.js';

let gw: StreamGateway;

beforeAll(async () => {
  gw = await startStreamGateway('gateway_sse', { heartbeatMs: 100 });
});
afterAll(async () => gw?.close());

const finishedInput = (seq: number) => (events: EventSourceMessage[]) =>
  events.some((e) => e.event === 'input_finished' && (JSON.parse(e.data) as { inputSeq: number }).inputSeq === seq);

const eventsUrl = (sessionId: string, query = '') => `${gw.url}/v1/sessions/${sessionId}/events${query}`;

async function streamIds(sessionId: string): Promise<string[]> {
  return (await gw.redis.xrange(eventStreamKey(gw.fleet.config.queueName, sessionId), '-', '+')).map(([id]) => id);
}

describe('GET /v1/sessions/:id/events', () => {
  it('sends every entry with its stream id, type and data from ?after=0', async () => {
    const handle = await gw.queue.add('send', { sessionId: 'sse-all', input: 'hello' });
    await handle.result({ timeoutMs: 20_000 });
    const sse = await openSse(eventsUrl('sse-all', '?after=0'), gw.auth);
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    await sse.readUntil(finishedInput(1));
    sse.drop();
    const ids = await streamIds('sse-all');
    expect(sse.events.map((e) => e.id)).toEqual(ids.slice(0, sse.events.length));
    expect(sse.events[0]).toMatchObject({ event: 'input_accepted' });
    const data = sse.events.map((e) => JSON.parse(e.data) as { seq: number; sessionId: string });
    expect(data.map((d) => d.seq)).toEqual(data.map((_, i) => i + 1));
    expect(sse.events.find((e) => e.event === 'stream_delta')?.data).toContain('Echo: ');
  });

  it('resumes from Last-Event-ID after a dropped connection mid-answer, nothing lost or doubled, the header winning over ?after', async () => {
    const { release, reached } = gw.llm.held('resume');
    onTestFinished(() => release.open());
    await gw.queue.add('send', { sessionId: 'sse-resume', input: '[hold:resume] go' });
    const first = await openSse(eventsUrl('sse-resume', '?after=0'), gw.auth);
    await reached.promise;
    await first.readUntil((events) => events.some((e) => e.event === 'stream_delta'));
    first.drop();
    const lastId = first.events.at(-1)!.id!;
    release.open();
    const second = await openSse(eventsUrl('sse-resume', '?after=0'), Object.assign({ 'last-event-id': lastId }, gw.auth));
    await second.readUntil(finishedInput(1));
    second.drop();
    const seen = [...first.events, ...second.events].map((e) => e.id);
    const ids = await streamIds('sse-resume');
    expect(seen).toEqual(ids.slice(0, seen.length));
    const text = [...first.events, ...second.events]
      .filter((e) => e.event === 'stream_delta')
      .map((e) => (JSON.parse(e.data) as { text: string }).text)
      .join('');
    expect(text).toBe('Part one. Part two.');
  });

  it('starts after ?after= when there is no Last-Event-ID, and only new events by default', async () => {
    await (await gw.queue.add('send', { sessionId: 'sse-after', input: 'one' })).result({ timeoutMs: 20_000 });
    const ids = await streamIds('sse-after');
    const fromMiddle = await openSse(eventsUrl('sse-after', `?after=${ids[2]}`), gw.auth);
    await fromMiddle.readUntil((events) => events.length === ids.length - 3);
    expect(fromMiddle.events[0]!.id).toBe(ids[3]);
    fromMiddle.drop();
    const onlyNew = await openSse(eventsUrl('sse-after'), gw.auth);
    await (await gw.queue.add('send', { sessionId: 'sse-after', input: 'two' })).result({ timeoutMs: 20_000 });
    await onlyNew.readUntil(finishedInput(2));
    onlyNew.drop();
    expect(onlyNew.events[0]).toMatchObject({ event: 'input_accepted' });
    expect(onlyNew.events.every((e) => (JSON.parse(e.data) as { inputSeq: number }).inputSeq === 2)).toBe(true);
  });

  it('sends a gap event when the cursor is older than the trimmed stream', async () => {
    await (await gw.queue.add('send', { sessionId: 'sse-gap', input: 'one' })).result({ timeoutMs: 20_000 });
    await gw.fleet.waitForSessionFinished('sse-gap', 1);
    const ids = await streamIds('sse-gap');
    await gw.redis.xtrim(eventStreamKey(gw.fleet.config.queueName, 'sse-gap'), 'MAXLEN', 2);
    const sse = await openSse(eventsUrl('sse-gap', `?after=${ids[0]}`), gw.auth);
    await sse.readUntil((events) => events.length >= 3);
    sse.drop();
    expect(sse.events[0]).toMatchObject({ event: 'gap', id: ids[0] });
    expect(JSON.parse(sse.events[0]!.data)).toEqual({ after: ids[0], firstAvailable: ids.at(-2), resumeFrom: ids[0] });
    expect(sse.events.slice(1).map((e) => e.id)).toEqual(ids.slice(-2));
  });

  it('sends heartbeat comments on a quiet stream', async () => {
    await gw.queue.sessions.create({ id: 'sse-quiet' });
    const sse = await openSse(eventsUrl('sse-quiet'), gw.auth);
    await sse.readUntil((_events, comments) => comments.length >= 2);
    sse.drop();
    expect(sse.comments.slice(0, 2)).toEqual(['hb', 'hb']);
  });

  it('answers 400 for a bad cursor and 404 for an unknown session, before any stream', async () => {
    const bad = await fetch(eventsUrl('sse-quiet', '?after=nope'), { headers: gw.auth });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('input.invalid');
    const badHeader = await fetch(eventsUrl('sse-quiet', '?after=0'), { headers: Object.assign({ 'last-event-id': 'x-1' }, gw.auth) });
    expect(badHeader.status).toBe(400);
    await badHeader.body?.cancel();
    const missing = await fetch(eventsUrl('sse-none'), { headers: gw.auth });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('session.not_found');
  });

  it('leaves no Redis connection or tail subscription behind after 1,000 clients come and go', async () => {
    await gw.queue.sessions.create({ id: 'sse-crowd' });
    const named = async () => (await gw.redis.client('LIST') as string).split('\n').filter((line) => line.includes(` name=${gw.connectionName} `)).length;
    // Warm up: the shared connections open with the first follower.
    const warm = await openSse(eventsUrl('sse-crowd'), gw.auth);
    warm.drop();
    await gw.fleet.waitFor('warm-up stream closed', async () => ((await gw.openStreams()) === 0 ? true : undefined));
    const before = await named();
    for (let batch = 0; batch < 10; batch += 1) {
      const clients = await Promise.all(Array.from({ length: 100 }, () => openSse(eventsUrl('sse-crowd'), gw.auth)));
      expect(clients.every((c) => c.status === 200)).toBe(true);
      for (const client of clients) client.drop();
    }
    await gw.fleet.waitFor('every stream closed', async () => ((await gw.openStreams()) === 0 ? true : undefined));
    const channel = tailChannel(gw.fleet.config.queueName, 'sse-crowd');
    await gw.fleet.waitFor('tail channel released', async () => {
      const [, count] = (await gw.redis.pubsub('NUMSUB', channel)) as [string, number];
      return count === 0 ? true : undefined;
    });
    expect(before).toBeGreaterThan(0);
    expect(await named()).toBe(before);
  }, 120_000);
});
