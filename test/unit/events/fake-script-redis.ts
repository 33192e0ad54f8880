import type { Redis } from 'ioredis';

/** One call of the publish script, as the fake saw it. */
export interface ScriptCall {
  streamKey: string;
  seqKey: string;
  maxLen: number;
  ttl: number;
  skip: number;
  entries: { type: string; data: string }[];
}

/**
 * Stands in for ioredis in unit tests of the publisher: `defineCommand` installs a function that does
 * what the Lua script does (seq, XADD, ids) in memory. Calls can be held (`hold()`) to observe what
 * queues behind an in-flight batch, or failed (`failNext`).
 */
export class FakeScriptRedis {
  readonly calls: ScriptCall[] = [];
  readonly streams = new Map<string, { id: string; type: string; data: string }[]>();
  private readonly seqs = new Map<string, number>();
  private nextId = 1;
  private held: (() => void)[] | null = null;
  failNext: Error | null = null;

  defineCommand(name: string): void {
    (this as unknown as Record<string, unknown>)[name] = (...args: (string | number)[]) => this.run(args);
  }

  /** Holds every call until `release()`; returns how many are waiting. */
  hold(): void {
    this.held = [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const go of held) go();
  }

  get waiting(): number {
    return this.held?.length ?? 0;
  }

  asRedis(): Redis {
    return this as unknown as Redis;
  }

  private async run(args: (string | number)[]): Promise<string[]> {
    if (this.held !== null) await new Promise<void>((resolve) => this.held?.push(resolve));
    const [streamKey, seqKey, maxLen, ttl, skip, ...pairs] = args.map(String);
    const call: ScriptCall = { streamKey: streamKey!, seqKey: seqKey!, maxLen: Number(maxLen), ttl: Number(ttl), skip: Number(skip), entries: [] };
    this.calls.push(call);
    if (this.failNext !== null) {
      const error = this.failNext;
      this.failNext = null;
      throw error;
    }
    let seq = (this.seqs.get(call.seqKey) ?? 0) + call.skip;
    const stream = this.streams.get(call.streamKey) ?? [];
    this.streams.set(call.streamKey, stream);
    const ids: string[] = [];
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      seq += 1;
      const entry = { id: `${this.nextId++}-0`, type: pairs[i]!, data: `{"seq":${seq},${pairs[i + 1]!}` };
      call.entries.push(entry);
      stream.push(entry);
      ids.push(entry.id);
    }
    this.seqs.set(call.seqKey, seq);
    return ids;
  }
}
