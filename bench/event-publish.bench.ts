/**
 * What publishing a session's events costs, against the cheapest way to put the same events on Redis.
 *
 * Workload: EVENTS events for SESSIONS concurrent sessions, a realistic run each (input started,
 * rounds of streamed text deltas with tool calls in between, input finished: mostly deltas), emitted
 * interleaved across sessions one event per session per tick, like concurrent runs on one worker.
 *
 * - floor: one pipeline of raw `XADD key * type … data …`, one entry per event (JSON-encoded, seq
 *   numbered in JS): no coalescing, no atomic seq, no trimming, no expiry.
 * - publisher: `RedisEventPublisher.runSink(…).emit(…)` for every event, then every sink closed
 *   (all writes acknowledged). Deltas are coalesced, so it writes fewer entries than events.
 *
 * Throughput is events emitted per second of wall time until Redis has acknowledged everything. After
 * a warm-up of each, the two are timed in pairs, alternating which goes first; medians are reported.
 *
 * Run: `npx tsx bench/event-publish.bench.ts` (REDIS_URL, default redis://127.0.0.1:6379) — prints
 * the JSON and writes bench/results/event-publish.json.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { RedisEventPublisher } from '../src/events/index.js';
import type { FleetEvent } from '../src/events/index.js';
import { eventFinishedKey, eventSeqKey, eventStreamKey } from '../src/fleet/fleet-keys.js';

const SESSIONS = 100;
const EVENTS = 20_000;
const RUNS = 5;
const PER_SESSION = EVENTS / SESSIONS;

/** One session's run: EVENTS / SESSIONS events, mostly token-sized text deltas. */
function sessionScript(): FleetEvent[] {
  const events: FleetEvent[] = [{ type: 'input_started', attempt: 1, agent: { name: 'default', version: 'v1' } }];
  for (let round = 0; events.length < PER_SESSION - 1; round += 1) {
    const streamId = `st_${round}`;
    events.push({ type: 'round_started', roundIndex: round }, { type: 'stream_started', streamId, attempt: 1 });
    for (let i = 0; i < 40 && events.length < PER_SESSION - 6; i += 1) events.push({ type: 'stream_delta', streamId, text: `tok${i % 10} ` });
    events.push({ type: 'stream_completed', streamId, attempt: 1, success: true });
    const toolCallId = `call_${round}`;
    events.push({ type: 'tool_call_started', name: 'search', toolCallId, toolInput: { q: `query ${round}` }, attempt: 1 });
    events.push({ type: 'tool_call_completed', name: 'search', toolCallId, toolInput: { q: `query ${round}` }, output: 'result '.repeat(20), failed: false, durationMs: 12 });
    events.push({ type: 'round_completed', roundIndex: round, hasTools: true });
  }
  while (events.length < PER_SESSION - 1) events.push({ type: 'stream_delta', streamId: 'st_last', text: 'end ' });
  const usage = { promptTokens: 100, completionTokens: 50, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 150, llmCalls: 4, costUsd: 0, costPicoUsd: 0 };
  events.push({ type: 'input_finished', status: 'completed', error: null, finalText: 'done', rounds: 4, toolCalls: 4, usage });
  return events.slice(0, PER_SESSION);
}

const script = sessionScript();
const sessionIds = Array.from({ length: SESSIONS }, (_, i) => `bench-session-${i}`);

async function floorRun(redis: Redis, queue: string): Promise<number> {
  const started = performance.now();
  const pipeline = redis.pipeline();
  for (let tick = 0; tick < PER_SESSION; tick += 1) {
    const event = script[tick]!;
    for (const sessionId of sessionIds) {
      const data = JSON.stringify({ seq: tick + 1, sessionId, inputSeq: 1, ...event, type: undefined });
      pipeline.xadd(`${queue}:events:${sessionId}`, '*', 'type', event.type, 'data', data);
    }
  }
  const results = (await pipeline.exec()) ?? [];
  const elapsed = performance.now() - started;
  if (results.length !== EVENTS || results.some(([error]) => error !== null)) throw new Error('floor run: not every XADD succeeded');
  return elapsed;
}

async function publisherRun(redis: Redis, queue: string): Promise<{ ms: number; entries: number }> {
  const started = performance.now();
  const publisher = new RedisEventPublisher(redis, {
    queueName: queue,
    onError: (error) => {
      throw error;
    },
  });
  const sinks = sessionIds.map((sessionId) => publisher.runSink(sessionId, 1));
  for (let tick = 0; tick < PER_SESSION; tick += 1) {
    const event = script[tick]!;
    for (const sink of sinks) sink.emit(event);
    // Let the tick end, as it does between stream chunks of concurrent runs.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(sinks.map((sink) => sink.close()));
  await publisher.close();
  const elapsed = performance.now() - started;
  if (publisher.dropped !== 0 || publisher.published + publisher.coalesced !== EVENTS) throw new Error('publisher run: events lost');
  return { ms: elapsed, entries: publisher.published };
}

async function clear(redis: Redis, queue: string): Promise<void> {
  const keys = sessionIds.flatMap((sessionId) => [eventStreamKey(queue, sessionId), eventSeqKey(queue, sessionId), eventFinishedKey(queue, sessionId)]);
  await redis.del(...keys);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));

async function main(): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const queue = `bench_events_${randomBytes(4).toString('hex')}`;
  try {
    const floor: number[] = [];
    const publisher: number[] = [];
    let entriesWritten = 0;
    for (let run = -1; run < RUNS; run += 1) {
      // Alternate which goes first, so neither always pays for the other's garbage.
      const floorFirst = run % 2 === 0;
      const first = floorFirst ? await floorRun(redis, queue) : await publisherRun(redis, queue);
      await clear(redis, queue);
      const second = floorFirst ? await publisherRun(redis, queue) : await floorRun(redis, queue);
      await clear(redis, queue);
      const [floorMs, published] = (floorFirst ? [first, second] : [second, first]) as [number, { ms: number; entries: number }];
      if (run >= 0) {
        floor.push(floorMs);
        publisher.push(published.ms);
        entriesWritten = published.entries;
      }
    }
    const floorEventsPerSec = EVENTS / (median(floor) / 1000);
    const publisherEventsPerSec = EVENTS / (median(publisher) / 1000);
    const result = {
      name: 'event-publish',
      events: EVENTS,
      runs: RUNS,
      floorEventsPerSec: Math.round(floorEventsPerSec),
      publisherEventsPerSec: Math.round(publisherEventsPerSec),
      entriesWritten,
      ratio: round(publisherEventsPerSec / floorEventsPerSec, 3),
      node: process.version,
      date: new Date().toISOString(),
    };
    const json = JSON.stringify(result, null, 2);
    console.log(json);
    await writeFile(new URL('./results/event-publish.json', import.meta.url), `${json}\n`);
  } finally {
    await redis.quit();
  }
}

await main();
