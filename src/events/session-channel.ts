import { InfrastructureError, InternalError } from '../core/errors/index.js';
import { DeltaCoalescer, type ReleasedEvent } from './delta-coalescer.js';
import { encodeEvent, type EncodedEvent } from './event-body.js';
import type { EventPublishErrorContext, EventPublisherConfig } from './event-publisher-options.js';
import type { FleetEvent } from './fleet-events.js';
import type { PublishEvents, PublishTarget } from './publish-events-script.js';

/** Counters shared by every channel of one publisher. */
export interface PublisherCounters {
  published: number;
  dropped: number;
  coalesced: number;
}

/** What a channel needs from its publisher. */
export interface ChannelDeps {
  sessionId: string;
  target: PublishTarget;
  config: EventPublisherConfig;
  write: PublishEvents;
  counters: PublisherCounters;
  report(error: Error, context: EventPublishErrorContext): void;
  /** Called when the channel holds nothing any more, so the publisher can forget it. */
  onIdle(channel: SessionChannel): void;
}

/**
 * A batch stops growing once its bodies reach this many characters, so one script call never
 * carries (or makes Redis spend its single thread on) megabytes of large tool outputs at once.
 */
const MAX_BATCH_CHARS = 1_000_000;

interface QueuedEntry extends EncodedEvent {
  /** Position in this channel's queue since it was created: flushes wait on it. */
  position: number;
  /** Set for `publish()`, whose caller waits for the id. */
  settle?: { resolve(id: string): void; reject(error: Error): void };
}

/**
 * The write-behind queue of one session's events. Emitted events go through the delta coalescer,
 * are encoded, and are written in batches: one script call per batch, at most one call in flight
 * per session (so a retried EVAL can never overtake an earlier batch), and whatever arrives while a
 * call is in flight forms the next batch. Different sessions' calls are pipelined on the connection.
 */
export class SessionChannel {
  private readonly coalescer: DeltaCoalescer;
  private readonly queue: QueuedEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private timerDeadline: number | null = null;
  private tick: NodeJS.Immediate | null = null;
  private writing = false;
  private overflowing = false;
  /** Entries lost since the last successful write: their seq numbers are burned by the next one. */
  private lost = 0;
  private enqueued = 0;
  private settled = 0;
  private waiters: { position: number; resolve(): void }[] = [];

  constructor(private readonly deps: ChannelDeps) {
    this.coalescer = new DeltaCoalescer(deps.config.coalesceMs, deps.config.coalesceMaxChars);
  }

  /** Queues an event; never throws (failures are counted and reported). */
  emit(inputSeq: number | null, event: FleetEvent): void {
    const released = this.coalescer.offer({ inputSeq, event }, this.deps.config.now());
    for (const item of released) this.enqueue(item);
    this.armTimer();
    this.schedule();
  }

  /** Writes an event after everything queued before it; resolves with its stream id. */
  publish(inputSeq: number | null, event: FleetEvent): Promise<string> {
    this.releaseDelta();
    return new Promise<string>((resolve, reject) => {
      const queued = this.enqueue({ inputSeq, event, parts: 1 }, { resolve, reject });
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

  /** Whether the channel holds nothing: no open delta, no queued or in-flight entries, no seq numbers to burn. */
  get idle(): boolean {
    return this.coalescer.deadline === null && this.queue.length === 0 && !this.writing && this.tick === null && this.lost === 0;
  }

  private enqueue(item: ReleasedEvent, settle?: QueuedEntry['settle']): boolean {
    this.deps.counters.coalesced += item.parts - 1;
    let encoded: EncodedEvent;
    try {
      encoded = encodeEvent(this.deps.sessionId, item.inputSeq, item.event);
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
    this.queue.push({ ...encoded, position: this.enqueued, ...(settle === undefined ? {} : { settle }) });
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

  /** Writes on the next tick, so every event emitted synchronously until then shares one batch. */
  private schedule(): void {
    if (this.writing || this.tick !== null) return;
    if (this.queue.length === 0) {
      this.forgetIfIdle();
      return;
    }
    this.tick = setImmediate(() => {
      this.tick = null;
      void this.writeBatch();
    });
  }

  private async writeBatch(): Promise<void> {
    const batch = this.takeBatch();
    const last = batch[batch.length - 1];
    if (last === undefined) return this.forgetIfIdle();
    this.writing = true;
    const skip = this.lost;
    try {
      const ids = await this.deps.write(this.deps.target, batch, skip);
      this.lost -= skip;
      this.deps.counters.published += batch.length;
      batch.forEach((entry, i) => entry.settle?.resolve(ids[i] ?? ''));
    } catch (cause) {
      this.failBatch(batch, cause);
    } finally {
      this.writing = false;
      this.settled = last.position;
      this.wakeWaiters();
    }
    this.schedule();
  }

  private takeBatch(): QueuedEntry[] {
    const limit = Math.min(this.queue.length, this.deps.config.maxBatchEvents);
    let count = 0;
    let chars = 0;
    while (count < limit && chars < MAX_BATCH_CHARS) {
      chars += this.queue[count]?.body.length ?? 0;
      count += 1;
    }
    return this.queue.splice(0, count);
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

  /** Lets the publisher forget a channel that holds nothing, so finished sessions cost no memory. */
  private forgetIfIdle(): void {
    if (this.idle && this.waiters.length === 0) this.deps.onIdle(this);
  }
}
