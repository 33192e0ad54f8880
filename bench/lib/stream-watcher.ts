/**
 * A client subscribed to many session streams the way the product's clients are, recording when
 * each event arrived. Used to time dispatch (`input_started`), fan-out (`stream_delta`) and
 * end-to-end (`input_finished`) as a client sees them. By default it follows them as
 * `SessionQueue.subscribe` does (`NotifiedTails`: every session's tail channel on one subscribed
 * connection, its reads on one shared connection; item 65); with `BENCH_FOLLOW=blocking`, as
 * `readSessionEvents` alone does and the queue did before item 65 (one `XREAD BLOCK` on one stream
 * per session, each on its own connection).
 *
 * (Until session 10 this was one `XREAD BLOCK` over every session's key on one connection. Redis
 * walks every key of such a read each time it wakes, and it woke for nearly every write: at 340
 * inputs/s over 200 streams Redis spent 0.89–1.07 ms of CPU per input with it, 0.70–0.78 ms with a
 * subscriber per session — bench/history/log-to-session-30.md, item 41.)
 */
import { setMaxListeners } from 'node:events';
import type { Redis } from 'ioredis';
import { ChannelSubscriptions } from '../../src/events/channel-subscriptions.js';
import { readSessionEvents } from '../../src/events/event-subscriber.js';
import { NotifiedTails } from '../../src/events/notified-tails.js';
import { tailChannel } from '../../src/fleet/fleet-keys.js';

/** How the watcher follows its streams: `shared` (the queue's tails, the default) or `blocking`. */
export type FollowMode = 'shared' | 'blocking';

/** The mode `BENCH_FOLLOW` names; `shared` when unset. */
export function followMode(): FollowMode {
  const mode = process.env['BENCH_FOLLOW'] ?? 'shared';
  if (mode !== 'shared' && mode !== 'blocking') throw new Error(`BENCH_FOLLOW must be shared or blocking, not ${mode}`);
  return mode;
}

export interface ReceivedEvent {
  sessionId: string;
  type: string;
  data: Record<string, unknown>;
  /** When the reply carrying it was received, on the watcher's clock (`performance.now()` unless given). */
  at: number;
}

export class StreamWatcher {
  readonly events: ReceivedEvent[] = [];
  readonly #stop = new AbortController();
  #readers: Promise<void>[] = [];
  /** The first reader's failure, thrown by {@link stop}. */
  #failure: unknown = null;
  readonly mode: FollowMode = followMode();
  readonly #channels: ChannelSubscriptions;
  readonly #tails: NotifiedTails;

  constructor(
    private readonly redis: Redis,
    private readonly queueName: string,
    readonly sessionIds: readonly string[],
    private readonly now: () => number = () => performance.now(),
  ) {
    // One subscription per session shares this signal, a listener each: by design (docs/client.md).
    setMaxListeners(0, this.#stop.signal);
    this.#channels = new ChannelSubscriptions(redis, null);
    this.#tails = new NotifiedTails(redis, this.#channels, queueName, null);
  }

  start(): void {
    this.#readers = this.sessionIds.map((sessionId) =>
      this.#read(sessionId).catch((error: unknown) => {
        this.#failure ??= error;
      }),
    );
  }

  /** Follows one session's stream from its start until stopped; a gap (events lost) fails the run. */
  async #read(sessionId: string): Promise<void> {
    const options = { queueName: this.queueName, sessionId, after: '0', blockMs: 1000, count: 1000, signal: this.#stop.signal };
    const items = readSessionEvents(this.redis, options, this.mode === 'shared' ? this.#tails.open : undefined);
    for await (const item of items) {
      const at = this.now();
      if (item.kind === 'gap') throw new Error(`stream watcher: events of ${sessionId} were lost after ${item.after}`);
      this.events.push({ sessionId, type: item.type, data: item.data, at });
    }
  }

  /**
   * Resolves once every subscriber waits for its stream, so a run's first inputs do not wait behind
   * the subscribers' connecting: each session's tail channel subscribed (shared), or Redis holding
   * (about) every subscriber blocked in its read (blocking; `INFO clients`: `blocked_clients`, which
   * counts other blocked clients too, such as a BullMQ worker's). Polls with a deadline.
   */
  async ready(timeoutMs = 10_000): Promise<void> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      const waiting = await this.#waiting();
      if (waiting >= this.sessionIds.length) return;
      if (this.#failure !== null) throw this.#failure;
      if (performance.now() > until) throw new Error(`stream watcher: ${waiting} of ${this.sessionIds.length} subscribers waiting after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async #waiting(): Promise<number> {
    if (this.mode === 'blocking') return Number(/blocked_clients:(\d+)/.exec(await this.redis.info('clients'))?.[1] ?? 0);
    const counts = (await this.redis.pubsub('NUMSUB', ...this.sessionIds.map((sessionId) => tailChannel(this.queueName, sessionId)))) as (string | number)[];
    return counts.filter((count, i) => i % 2 === 1 && Number(count) > 0).length;
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#readers);
    await this.#channels.close();
    await this.#tails.close();
    if (this.#failure !== null) throw this.#failure;
  }
}

/** Polls the watcher's events (with a deadline) until `total` events of `type` were received. */
export async function waitForEvents(watcher: StreamWatcher, type: string, total: number, timeoutMs: number): Promise<void> {
  const until = performance.now() + timeoutMs;
  let seen = 0;
  let counted = 0;
  for (;;) {
    for (; counted < watcher.events.length; counted += 1) if (watcher.events[counted]!.type === type) seen += 1;
    if (seen >= total) return;
    if (performance.now() > until) throw new Error(`stream watcher: ${seen} of ${total} ${type} events received within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
