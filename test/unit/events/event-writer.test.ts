import { describe, expect, it } from 'vitest';
import { EventWriter, MAX_CALL_CHARS, type WritingChannel } from '../../../src/events/event-writer.js';
import type { PublishEvents, SessionBatch } from '../../../src/events/publish-events-script.js';
import { calculateSlot } from '../../../src/fleet/redis-layout.js';

/** A stream key whose hash tag is the session id: every session in a slot of its own (unless two ids share one). */
const streamKey = (sessionId: string): string => `lf:events:{${sessionId}}`;

/** A session's batch of `count` entries of `chars` characters each. */
function batchOf(sessionId: string, count = 1, chars = 10): SessionBatch {
  return {
    target: {
      streamKey: streamKey(sessionId),
      seqKey: `${streamKey(sessionId)}:seq`,
      finishedKey: `${streamKey(sessionId)}:finished`,
      deletedKey: `lf:deleted:{${sessionId}}`,
    },
    entries: Array.from({ length: count }, () => ({ type: 'stream_delta', body: 'x'.repeat(chars) })),
    skip: 0,
    report: false,
    refreshExpiry: false,
  };
}

/** A channel with one batch to write, which records how its write ended. */
class OneBatch implements WritingChannel {
  outcome: string[] | null | Error | undefined = undefined;
  readonly ended: Promise<void>;
  #end!: () => void;
  #batch: SessionBatch | null;

  constructor(batch: SessionBatch) {
    this.#batch = batch;
    this.ended = new Promise((resolve) => (this.#end = resolve));
  }

  startWrite(): SessionBatch | null {
    const batch = this.#batch;
    this.#batch = null;
    return batch;
  }

  endWrite(outcome: string[] | null | Error): void {
    this.outcome = outcome;
    this.#end();
  }
}

/** A fake script call: records each call's batches (their stream keys) and answers null for each. */
function recordingWrite(): { write: PublishEvents; calls: string[][] } {
  const calls: string[][] = [];
  const write: PublishEvents = async (batches) => {
    calls.push(batches.map((batch) => batch.target.streamKey));
    return batches.map(() => null);
  };
  return { write, calls };
}

/** Enqueues a channel per batch in one turn, and waits until every write ended. */
async function writeAll(writer: EventWriter, batches: SessionBatch[]): Promise<OneBatch[]> {
  const channels = batches.map((batch) => new OneBatch(batch));
  for (const channel of channels) writer.enqueue(channel);
  await Promise.all(channels.map((channel) => channel.ended));
  return channels;
}

const slotOf = (batch: SessionBatch): number => calculateSlot(batch.target.streamKey);

/** Session ids whose stream keys have pairwise distinct slots. */
function distinctSlotIds(count: number): string[] {
  const ids: string[] = [];
  const slots = new Set<number>();
  for (let i = 0; ids.length < count; i += 1) {
    const slot = calculateSlot(`s-${i}`);
    if (slots.has(slot)) continue;
    slots.add(slot);
    ids.push(`s-${i}`);
  }
  return ids;
}

/** `count` different session ids whose keys share one slot. */
function sameSlotIds(count = 2): string[] {
  const bySlot = new Map<number, string[]>();
  for (let i = 0; ; i += 1) {
    const id = `t-${i}`;
    const ids = bySlot.get(calculateSlot(id)) ?? [];
    ids.push(id);
    bySlot.set(calculateSlot(id), ids);
    if (ids.length === count) return ids;
  }
}

describe('EventWriter on one Redis node (no slotOf)', () => {
  it("writes every session's batch of a turn in one call", async () => {
    const { write, calls } = recordingWrite();
    const ids = distinctSlotIds(4);
    const channels = await writeAll(new EventWriter(write), ids.map((id) => batchOf(id)));
    expect(calls).toEqual([ids.map((id) => streamKey(id))]);
    expect(channels.map((channel) => channel.outcome)).toEqual([null, null, null, null]);
  });
});

describe('EventWriter on a Redis Cluster (slotOf)', () => {
  it('puts batches of different slots in separate calls', async () => {
    const { write, calls } = recordingWrite();
    const ids = distinctSlotIds(3);
    await writeAll(new EventWriter(write, slotOf), ids.map((id) => batchOf(id)));
    expect(calls).toHaveLength(3);
    expect(calls.map((call) => call.length)).toEqual([1, 1, 1]);
    expect(calls.flat().sort()).toEqual(ids.map((id) => streamKey(id)).sort());
  });

  it('puts batches of one slot in the same call, beside a call of another slot', async () => {
    const { write, calls } = recordingWrite();
    const [a, b] = sameSlotIds() as [string, string];
    const other = distinctSlotIds(50).find((id) => calculateSlot(id) !== calculateSlot(a))!;
    await writeAll(new EventWriter(write, slotOf), [batchOf(a), batchOf(other), batchOf(b)]);
    expect(calls).toHaveLength(2);
    expect(calls).toContainEqual([streamKey(a), streamKey(b)]);
    expect(calls).toContainEqual([streamKey(other)]);
    for (const call of calls) expect(new Set(call.map((key) => calculateSlot(key))).size).toBe(1);
  });

  it('hands each channel the outcome of its own call', async () => {
    const ids = distinctSlotIds(2);
    const failing = streamKey(ids[1]!);
    const write: PublishEvents = async (batches) => {
      if (batches.some((batch) => batch.target.streamKey === failing)) throw new Error('CLUSTERDOWN');
      return batches.map(() => ['1-1']);
    };
    const channels = await writeAll(new EventWriter(write, slotOf), ids.map((id) => batchOf(id)));
    expect(channels[0]!.outcome).toEqual(['1-1']);
    expect(channels[1]!.outcome).toEqual(new Error('CLUSTERDOWN'));
  });

  it('still splits one slot\'s call once its bodies reach MAX_CALL_CHARS', async () => {
    const { write, calls } = recordingWrite();
    const [a, b] = sameSlotIds() as [string, string];
    const other = distinctSlotIds(50).find((id) => calculateSlot(id) !== calculateSlot(a))!;
    // a alone reaches the limit: its call goes at once, and b (same slot) starts a new one.
    const big = batchOf(a, 2, MAX_CALL_CHARS / 2);
    await writeAll(new EventWriter(write, slotOf), [big, batchOf(other), batchOf(b)]);
    expect(calls).toHaveLength(3);
    expect(calls[0]).toEqual([streamKey(a)]);
    expect(calls).toContainEqual([streamKey(b)]);
    expect(calls).toContainEqual([streamKey(other)]);
  });

  it("closes a slot's call with the batch that reaches MAX_CALL_CHARS, not before", async () => {
    const { write, calls } = recordingWrite();
    const [a, b, c] = sameSlotIds(3) as [string, string, string];
    const half = MAX_CALL_CHARS / 2;
    // a stays below the limit, b takes the call past it: a and b go together; c starts the next call.
    await writeAll(new EventWriter(write, slotOf), [batchOf(a, 1, half - 1), batchOf(b, 1, half + 1), batchOf(c)]);
    expect(calls).toEqual([[streamKey(a), streamKey(b)], [streamKey(c)]]);
  });
});
