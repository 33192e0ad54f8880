import type { PublishEvents, SessionBatch } from './publish-events-script.js';

/** A session's side of a shared write: hands over its next batch, and learns how it went. */
export interface WritingChannel {
  /** Takes the next batch to write, marking the channel busy; null when it has nothing. */
  startWrite(): SessionBatch | null;
  /** The batch's stream ids (null: all written, ids not asked for), or why it was not written. */
  endWrite(outcome: string[] | null | Error): void;
}

/**
 * A call stops taking sessions once its bodies reach this many characters, so one script call never
 * carries (or makes Redis spend its single thread on) megabytes of large tool outputs at once.
 */
export const MAX_CALL_CHARS = 1_000_000;

/**
 * Shares script calls across sessions (docs/client.md, "How events are written"): every channel that
 * has events ready in one turn of the event loop writes in the same call at the end of that turn. A
 * channel asks once (`enqueue`) and is asked for its batch when the call is built, so it never has
 * two batches in flight — a retried EVAL can never overtake an earlier batch of the same session.
 * Calls themselves are not throttled: Redis answers in well under a millisecond, and the turn already gathers every session
 * that emitted in it.
 */
export class EventWriter {
  private ready: WritingChannel[] = [];
  private scheduled = false;

  /**
   * @param slotOf on a Redis Cluster, the hash slot of a batch's keys: one call carries only batches
   * of one slot (a script's keys must share one), so the turn's batches are grouped by it.
   */
  constructor(
    private readonly write: PublishEvents,
    private readonly slotOf: ((batch: SessionBatch) => number) | null = null,
  ) {}

  /** Queues `channel` for the next call; the channel asks at most once until it is called back. */
  enqueue(channel: WritingChannel): void {
    this.ready.push(channel);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const ready = this.ready;
    this.ready = [];
    // One open call per slot (a single group without a cluster), sent once it reaches MAX_CALL_CHARS.
    const open = new Map<number, { channels: WritingChannel[]; batches: SessionBatch[]; chars: number }>();
    for (const channel of ready) {
      const batch = channel.startWrite();
      if (batch === null) continue;
      const slot = this.slotOf === null ? 0 : this.slotOf(batch);
      let call = open.get(slot);
      if (call === undefined) open.set(slot, (call = { channels: [], batches: [], chars: 0 }));
      call.channels.push(channel);
      call.batches.push(batch);
      for (const entry of batch.entries) call.chars += entry.body.length;
      if (call.chars < MAX_CALL_CHARS) continue;
      open.delete(slot);
      void this.call(call.channels, call.batches);
    }
    for (const call of open.values()) void this.call(call.channels, call.batches);
  }

  private async call(channels: WritingChannel[], batches: SessionBatch[]): Promise<void> {
    let outcomes: (string[] | null | Error)[];
    try {
      outcomes = await this.write(batches);
    } catch (cause) {
      const error = cause instanceof Error ? cause : new Error(String(cause));
      outcomes = batches.map(() => error);
    }
    channels.forEach((channel, index) => channel.endWrite(outcomes[index]!));
  }
}
