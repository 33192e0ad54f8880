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

  constructor(private readonly write: PublishEvents) {}

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
    let start = 0;
    while (start < ready.length) {
      const channels: WritingChannel[] = [];
      const batches: SessionBatch[] = [];
      let chars = 0;
      while (start < ready.length && (batches.length === 0 || chars < MAX_CALL_CHARS)) {
        const channel = ready[start]!;
        start += 1;
        const batch = channel.startWrite();
        if (batch === null) continue;
        channels.push(channel);
        batches.push(batch);
        for (const entry of batch.entries) chars += entry.body.length;
      }
      if (batches.length > 0) void this.call(channels, batches);
    }
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
