import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamItem } from '../../../src/fleet/fleet-events.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

/** Longest `handle.events()` may go on once its input has settled: 2 × recheckMs (default 2 s) plus slack. */
const ENDS_WITHIN_MS = 15_000;

/** Collects every item, or rejects once `timeoutMs` has passed without the iteration ending. */
async function collectWithin(items: AsyncIterable<StreamItem>, timeoutMs: number): Promise<StreamItem[]> {
  const all: StreamItem[] = [];
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`handle.events() did not end within ${timeoutMs} ms`)), timeoutMs);
  });
  const collecting = (async () => {
    for await (const item of items) all.push(item);
    return all;
  })();
  try {
    return await Promise.race([collecting, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `handle.events()` when the input's `input_finished` never reaches the stream (a Redis failover to a
 * replica that missed it): it must end once Postgres has the input settled. No worker runs here, so
 * the input is settled directly in Postgres and no `input_finished` is ever published.
 */
describe('handle.events() of an input whose input_finished is lost', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;

  beforeAll(async () => {
    fleet = await FleetFixture.create('input_events_lost');
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName, recheckMs: 100 });
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
  });

  it('ends once the input has settled in Postgres, after what the stream holds of it', async () => {
    const handle = await queue.add('send', { sessionId: 'lost-finish', input: 'hello' });
    const items = handle.events()[Symbol.asyncIterator]();
    const first = await items.next();
    expect(first.value).toMatchObject({ kind: 'event', type: 'input_accepted', data: { inputSeq: handle.seq } });
    await fleet.pool.query("UPDATE session_inputs SET status = 'cancelled', finished_at = now() WHERE session_id = $1 AND seq = $2", ['lost-finish', handle.seq]);
    const rest = await collectWithin({ [Symbol.asyncIterator]: () => items }, ENDS_WITHIN_MS);
    expect(rest).toEqual([]);
    await expect(handle.result({ timeoutMs: 5_000 })).resolves.toMatchObject({ status: 'cancelled' });
  });

  it('ends with session.not_found when the session is deleted while it is followed', async () => {
    const handle = await queue.add('send', { sessionId: 'gone-while-followed', input: 'hello' });
    const items = handle.events()[Symbol.asyncIterator]();
    expect((await items.next()).value).toMatchObject({ kind: 'event', type: 'input_accepted' });
    // Postgres only: the stream stays, so only the re-read can tell the input will never finish.
    await fleet.pool.query('DELETE FROM sessions WHERE id = $1', ['gone-while-followed']);
    await expect(collectWithin({ [Symbol.asyncIterator]: () => items }, ENDS_WITHIN_MS)).rejects.toMatchObject({ code: 'session.not_found' });
  });
});
