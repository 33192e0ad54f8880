import { Redis } from 'ioredis';

/**
 * A subscriber written the way a user in any language would write one, from the documented wire
 * format alone (docs/client.md): no loopfleet import, just the key pattern, XREAD BLOCK and a JSON
 * parse. If this stops working, touch point 2 is broken for every non-TypeScript client.
 */
export interface RawEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** Reads `count` entries after `after` from `<queue>:events:<sessionId>` with a plain blocking XREAD loop. */
export async function rawFollow(url: string, queue: string, sessionId: string, after: string, count: number): Promise<RawEvent[]> {
  const redis = new Redis(url);
  const key = `${queue}:events:${sessionId}`;
  const events: RawEvent[] = [];
  let cursor = after;
  try {
    while (events.length < count) {
      const reply = (await redis.xread('BLOCK', 5000, 'STREAMS', key, cursor)) as [string, [string, string[]][]][] | null;
      for (const [id, fields] of reply?.[0]?.[1] ?? []) {
        const map = new Map<string, string>();
        for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
        events.push({ id, type: map.get('type')!, data: JSON.parse(map.get('data')!) as Record<string, unknown> });
        cursor = id;
      }
    }
    return events;
  } finally {
    await redis.quit();
  }
}
