import { InfrastructureError, InternalError, LeaseLostError } from '../core/errors/index.js';
import { DeltaCoalescer, type ReleasedEvent } from './delta-coalescer.js';
import { encodeEvent, envelopeHead, type EncodedEvent } from './event-body.js';
import type { EventPublishErrorContext, EventPublisherConfig } from './event-publisher-options.js';
import { MAX_CALL_CHARS, type EventWriter, type WritingChannel } from './event-writer.js';
import type { FleetEvent } from '../fleet/fleet-events.js';
import { expiryRefreshMs, type PublishTarget, type SessionBatch } from './publish-events-script.js';

/** Counters shared by every channel of one publisher. */
export interface PublisherCounters {
  published: number;
  dropped: number;
  coalesced: number;
  duplicateFinishes: number;
  fenced: number;
}

/** What a channel needs from its publisher. */
export interface ChannelDeps {
  sessionId: string;
  target: PublishTarget;
  config: EventPublisherConfig;
  writer: EventWriter;
  counters: PublisherCounters;
  report(error: Error, context: EventPublishErrorContext): void;
  /** Called when the channel holds nothing any more, so the publisher may forget it. */
  onIdle(channel: SessionChannel): void;
  /** Seq numbers a forgotten channel of this session still owed (lost entries): the first write burns them. */
  owed?: number;
}

interface QueuedEntry extends EncodedEvent {
  /** The lease token the entry is written under (`SessionBatch.fence`); a batch never mixes two. */
  fence: number | undefined;
  /** Position in this channel's queue since it was created: flushes wait on it. */
  position: number;
  /** Set for `publish()`, whose caller waits for the id ('' when the script left a duplicate finish out). */
  settle: { resolve(id: string): void; reject(error: Error): void } | undefined;
}

/**
 * The write-behind queue of one session's events. Emitted events go through the delta coalescer,
 * are encoded, and are written in batches: at most one batch in flight per session (so a retried
 * EVAL can never overtake an earlier batch), and whatever arrives while one is in flight forms the
 * next. The batches of every session ready in the same turn share one script call ({@link EventWriter}).
 */
export class SessionChannel implements WritingChannel {
  private readonly coalescer: DeltaCoalescer;
  private readonly queue: QueuedEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private timerDeadline: number | null = null;
  /** Waiting in the writer's next call. */
  private scheduled = false;
  /** The batch in flight, if any. */
  private writing: { batch: QueuedEntry[]; skip: number } | null = null;
  /** When this channel last asked for the keys' idle expiry to be pushed back (`config.now()`). */
  private expiryPushedAt = Number.NEGATIVE_INFINITY;
  private overflowing = false;
  /** Entries lost since the last successful write: their seq numbers are burned by the next one. */
  private lost = 0;
  private enqueued = 0;
  private settled = 0;
  private waiters: { position: number; resolve(): void }[] = [];
  /** The envelope head of the input the last event belonged to (a run emits many in a row). */
  private head: { inputSeq: number | null; text: string } | null = null;

  constructor(private readonly deps: ChannelDeps) {
    this.coalescer = new DeltaCoalescer(deps.config.coalesceMs, deps.config.coalesceMaxChars);
    this.lost = deps.owed ?? 0;
  }

  /** Queues an event, written under lease `fence` if given; never throws (failures are counted and reported). */
  emit(inputSeq: number | null, event: FleetEvent, fence?: number): void {
    const released = this.coalescer.offer({ inputSeq, event, fence }, this.deps.config.now());
    for (const item of released) this.enqueue(item);
    this.armTimer();
    this.schedule();
  }

  /**
   * Writes an event after everything queued before it; resolves with its stream id, or '' for an
   * `input_finished` whose input already had one on the stream (not written again, I6).
   */
  publish(inputSeq: number | null, event: FleetEvent, fence?: number): Promise<string> {
    this.releaseDelta();
    return new Promise<string>((resolve, reject) => {
      const queued = this.enqueue({ inputSeq, event, fence, parts: 1 }, { resolve, reject });
      if (queued) this.schedule();
    });
  }

  /** Releases the open delta and resolves once everything queued so far is written or dropped. */
  flush(): Promise<void> {
    this.releaseDelta();
    this.schedule();
    const position = this.enqueued;
    if (this.settled >= position) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiters.push({ position, resolve }));
  }

  /**
   * Whether the channel holds nothing: no open delta, no queued or in-flight entries. It may still owe
   * seq numbers for entries it lost ({@link owedSeqs}); the publisher keeps those when it forgets it.
   */
  get idle(): boolean {
    return this.coalescer.deadline === null && this.queue.length === 0 && this.writing === null && !this.scheduled;
  }

  /** Entries lost since the last successful write, whose seq numbers the next write burns (a visible hole). */
  get owedSeqs(): number {
    return this.lost;
  }

  private enqueue(item: ReleasedEvent, settle?: QueuedEntry['settle']): boolean {
    this.deps.counters.coalesced += item.parts - 1;
    let encoded: EncodedEvent;
    try {
      if (this.head?.inputSeq !== item.inputSeq) this.head = { inputSeq: item.inputSeq, text: envelopeHead(this.deps.sessionId, item.inputSeq) };
      encoded = encodeEvent(this.deps.sessionId, item.inputSeq, item.event, this.head.text);
    } catch (cause) {
      const error = new InternalError(`event ${item.event.type} is not JSON-serialisable`, { cause });
      return this.lose('encode', [item.event.type], error, settle);
    }
    if (this.queue.length >= this.deps.config.maxQueuedEvents) {
      const error = new InfrastructureError(`event queue of session ${this.deps.sessionId} is full (${this.queue.length} entries)`);
      return this.lose('overflow', [item.event.type], error, settle);
    }
    this.overflowing = false;
    this.enqueued += 1;
    // A literal, not `{ ...encoded, … }`: Node 20's V8 takes a slow path (about 1 µs) for a spread
    // followed by more properties, and this runs for every event.
    this.queue.push({ type: encoded.type, body: encoded.body, finishes: encoded.finishes, firstInput: encoded.firstInput, fence: item.fence, position: this.enqueued, settle });
    return true;
  }

  /** Counts one lost entry; overflow is reported once per episode, not once per event. */
  private lose(stage: EventPublishErrorContext['stage'], types: string[], error: Error, settle?: QueuedEntry['settle']): false {
    this.deps.counters.dropped += 1;
    this.lost += 1;
    settle?.reject(error);
    if (stage !== 'overflow' || !this.overflowing) this.deps.report(error, { sessionId: this.deps.sessionId, stage, events: 1, types });
    if (stage === 'overflow') this.overflowing = true;
    return false;
  }

  private releaseDelta(): void {
    for (const item of this.coalescer.release()) this.enqueue(item);
    this.armTimer();
  }

  /** Keeps one timer matching the open delta's deadline; a released or replaced delta resets it. */
  private armTimer(): void {
    const deadline = this.coalescer.deadline;
    if (deadline === this.timerDeadline) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.timerDeadline = deadline;
    if (deadline === null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerDeadline = null;
      this.releaseDelta();
      this.schedule();
    }, Math.max(0, deadline - this.deps.config.now()));
  }

  /** Writes at the end of the turn, so every event emitted synchronously until then shares one batch. */
  private schedule(): void {
    if (this.writing !== null || this.scheduled) return;
    if (this.queue.length === 0) {
      this.forgetIfIdle();
      return;
    }
    this.scheduled = true;
    this.deps.writer.enqueue(this);
  }

  startWrite(): SessionBatch | null {
    this.scheduled = false;
    const batch = this.takeBatch();
    if (batch.length === 0) {
      this.forgetIfIdle();
      return null;
    }
    const skip = this.lost;
    this.writing = { batch, skip };
    // Ids only when someone awaits one (`publish`); the expiry pushed back at most once per interval.
    const now = this.deps.config.now();
    const refreshExpiry = now - this.expiryPushedAt >= expiryRefreshMs(this.deps.config.idleExpirySeconds);
    if (refreshExpiry) this.expiryPushedAt = now;
    return { target: this.deps.target, entries: batch, skip, report: batch.some((entry) => entry.settle !== undefined), refreshExpiry, fence: batch[0]!.fence };
  }

  endWrite(outcome: string[] | null | Error): void {
    const writing = this.writing;
    if (writing === null) return;
    const { batch, skip } = writing;
    if (outcome instanceof LeaseLostError) {
      // Refused whole, nothing written: the session was deleted, and these are its events. They burn
      // no seq of the stream, which may already be a new session's under the same id.
      this.fence(batch, outcome);
    } else if (outcome instanceof Error) {
      // Whether the expiry was pushed back is unknown: the next write asks again.
      this.expiryPushedAt = Number.NEGATIVE_INFINITY;
      this.failBatch(batch, outcome);
    } else if (outcome === null) {
      // Every entry written; none was awaited (the script answers ids whenever a finish is in the batch).
      this.lost -= skip;
      this.deps.counters.published += batch.length;
    } else {
      this.lost -= skip;
      // '' marks a duplicate input_finished the script left out: settled, but not on the stream.
      const left = outcome.filter((id) => id === '').length;
      this.deps.counters.published += batch.length - left;
      this.deps.counters.duplicateFinishes += left;
      batch.forEach((entry, i) => entry.settle?.resolve(outcome[i] ?? ''));
    }
    this.writing = null;
    this.settled = batch[batch.length - 1]!.position;
    this.wakeWaiters();
    this.schedule();
  }

  /** The next entries to write: bounded in count and size, and all under the first one's lease. */
  private takeBatch(): QueuedEntry[] {
    const limit = Math.min(this.queue.length, this.deps.config.maxBatchEvents);
    const fence = this.queue[0]?.fence;
    let count = 0;
    let chars = 0;
    while (count < limit && chars < MAX_CALL_CHARS && (count === 0 || this.queue[count]!.fence === fence)) {
      chars += this.queue[count]?.body.length ?? 0;
      count += 1;
    }
    return this.queue.splice(0, count);
  }

  /**
   * A batch the script refused because its lease belongs to a deleted session: its entries are
   * dropped and rejected with `lease.lost`, and count as lost nowhere. The seq numbers it was to burn
   * (`skip`) stay owed: the channel serves every lease of the session id in this process, so they
   * may be a new session's losses, and a hole too many is harmless where one too few hides a gap (I7).
   */
  private fence(batch: QueuedEntry[], error: LeaseLostError): void {
    this.deps.counters.dropped += batch.length;
    this.deps.counters.fenced += batch.length;
    for (const entry of batch) entry.settle?.reject(error);
    this.deps.report(error, { sessionId: this.deps.sessionId, stage: 'fenced', events: batch.length, types: batch.map((e) => e.type) });
  }

  private failBatch(batch: QueuedEntry[], cause: unknown): void {
    const message = cause instanceof Error ? cause.message : String(cause);
    const error = new InfrastructureError(`writing ${batch.length} event(s) to Redis failed: ${message}`, {
      cause,
      details: { sessionId: this.deps.sessionId, events: batch.length },
    });
    this.deps.counters.dropped += batch.length;
    this.lost += batch.length;
    for (const entry of batch) entry.settle?.reject(error);
    this.deps.report(error, { sessionId: this.deps.sessionId, stage: 'write', events: batch.length, types: batch.map((e) => e.type) });
  }

  /** Resolves the flushes whose entries are all written or dropped. */
  private wakeWaiters(): void {
    const done = this.waiters.filter((waiter) => waiter.position <= this.settled);
    if (done.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => waiter.position > this.settled);
    for (const waiter of done) waiter.resolve();
  }

  /** Whether the publisher may drop the channel: idle, and no flush waiting on it. */
  get forgettable(): boolean {
    return this.idle && this.waiters.length === 0;
  }

  /** Tells the publisher when the channel holds nothing, so finished sessions do not accumulate. */
  private forgetIfIdle(): void {
    if (this.forgettable) this.deps.onIdle(this);
  }
}
