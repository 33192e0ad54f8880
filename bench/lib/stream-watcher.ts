/**
 * A subscriber of many session streams on one connection (`XREAD BLOCK` over every key), recording
 * when each event arrived. Used to time dispatch (`input_started`), fan-out (`stream_delta`) and
 * end-to-end (`input_finished`) as a client sees them.
 */
import type { Redis } from 'ioredis';

export interface ReceivedEvent {
  sessionId: string;
  type: string;
  data: Record<string, unknown>;
  /** When the reply carrying it was received, on the watcher's clock (`performance.now()` unless given). */
  at: number;
}

export class StreamWatcher {
  readonly events: ReceivedEvent[] = [];
  readonly #connection: Redis;
  readonly #keys: string[];
  readonly #cursors: string[];
  #stopped = false;
  #loop: Promise<void> | null = null;

  constructor(
    redis: Redis,
    queueName: string,
    readonly sessionIds: readonly string[],
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#connection = redis.duplicate();
    this.#keys = sessionIds.map((id) => `${queueName}:events:${id}`);
    this.#cursors = sessionIds.map(() => '0-0');
  }

  start(): void {
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const reply = (await this.#connection.xread('COUNT', 1000, 'BLOCK', 200, 'STREAMS', ...this.#keys, ...this.#cursors)) as [string, [string, string[]][]][] | null;
      const at = this.now();
      for (const [key, entries] of reply ?? []) {
        const index = this.#keys.indexOf(key);
        for (const [id, fields] of entries) {
          this.#cursors[index] = id;
          const type = fields[fields.indexOf('type') + 1]!;
          const data = JSON.parse(fields[fields.indexOf('data') + 1]!) as Record<string, unknown>;
          this.events.push({ sessionId: this.sessionIds[index]!, type, data, at });
        }
      }
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
    this.#connection.disconnect();
  }
}
