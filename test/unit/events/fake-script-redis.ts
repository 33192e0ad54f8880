import type { Command, Redis } from 'ioredis';
import { FENCED_REPLY } from '../../../src/events/publish-events-script.js';

/** One session's part of a publish script call, as the fake saw it. */
export interface ScriptCall {
  /** Which script call (0, 1, …) carried this part: parts of one call share it. */
  call: number;
  streamKey: string;
  seqKey: string;
  finishedKey: string;
  deletedKey: string;
  maxLen: number;
  ttl: number;
  /** How many finished inputs the set keeps. */
  kept: number;
  skip: number;
  /** The part's flags: `r` (answer ids), `e` (push back the idle expiry). */
  flags: string;
  /** The lease token the part is written under, '' for none. */
  fence: string;
  /**
   * `finishes`: the entry's mark — the input seq of an `input_finished`, `first` for the
   * `input_accepted` of input 1 (empties the finished set), '' otherwise; `id` is '' for one left out.
   */
  entries: { id: string; type: string; data: string; finishes: string }[];
}

/**
 * Stands in for ioredis in unit tests of the publisher: `sendCommand` takes the script's call and does
 * what the Lua script does (per session: leave out finishes already written, seq, XADD, record the
 * finished inputs, ids or the count written; refuse a part fenced by a deletion) in memory; the idle expiry it does not model. Calls can be held (`hold()`) to
 * observe what queues behind an in-flight batch, failed as a whole (`failNext`), or have one
 * stream's part refused (`refuse`), as Redis refuses a key of the wrong type.
 */
export class FakeScriptRedis {
  /** Every session part of every call, in order. */
  readonly calls: ScriptCall[] = [];
  /** How many script calls were made. */
  invocations = 0;
  /** Streams whose parts are refused with this message, as the script's `pcall` reports them. */
  readonly refuse = new Map<string, string>();
  readonly streams = new Map<string, { id: string; type: string; data: string }[]>();
  /** The finished set of each session: input seqs whose `input_finished` was written. */
  readonly finished = new Map<string, Set<string>>();
  /** Deletion fences by key (`eventDeletedKey`): parts under this lease token or an older one are refused. */
  readonly deleted = new Map<string, number>();
  private readonly seqs = new Map<string, number>();
  private nextId = 1;
  private held: (() => void)[] | null = null;
  failNext: Error | null = null;

  /** The connection's options, as the publisher reads them (no key prefix). */
  readonly options = {};
  /** ioredis's connection status, as the publisher reads it on close. */
  status = 'ready';
  /** The command name of each call as written: `eval` (the script's text) or `evalsha`. */
  readonly names: string[] = [];
  /** Answers the next `EVALSHA` with NOSCRIPT, as a server whose script cache was flushed. */
  flushScripts = false;
  /** The one socket commands are written to (the publisher remembers where it sent the script). */
  private readonly socket = {};

  /** Takes a command as ioredis does: has it written (`toWritable`), runs it, settles its promise. */
  sendCommand(command: Command): Promise<unknown> {
    command.toWritable(this.socket);
    this.names.push(command.name);
    if (command.name === 'evalsha' && this.flushScripts) {
      this.flushScripts = false;
      command.reject(new Error('NOSCRIPT No matching script. Please use EVAL.'));
    } else {
      // After the script (text or SHA): numberOfKeys, the keys, the other arguments.
      this.run(command.args.slice(1) as string[]).then(
        (reply) => command.resolve(reply),
        (error: Error) => command.reject(error),
      );
    }
    return command.promise;
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

  private async run(args: (string | number)[]): Promise<(string[] | string | number)[]> {
    if (this.held !== null) await new Promise<void>((resolve) => this.held?.push(resolve));
    const call = this.invocations;
    this.invocations += 1;
    const text = args.map(String);
    const keyCount = Number(text[0]);
    const keys = text.slice(1, 1 + keyCount);
    const [maxLen, ttl, kept, ...rest] = text.slice(1 + keyCount);
    const parts: ScriptCall[] = [];
    for (let s = 0; s < keyCount / 4; s += 1) {
      const skip = Number(rest.shift());
      const count = Number(rest.shift());
      const flags = rest.shift()!;
      const fence = rest.shift()!;
      const triples = rest.splice(0, 3 * count);
      const part: ScriptCall = {
        call,
        streamKey: keys[4 * s]!,
        seqKey: keys[4 * s + 1]!,
        finishedKey: keys[4 * s + 2]!,
        deletedKey: keys[4 * s + 3]!,
        maxLen: Number(maxLen),
        ttl: Number(ttl),
        kept: Number(kept),
        skip,
        flags,
        fence,
        entries: [],
      };
      for (let i = 0; i < count; i += 1) part.entries.push({ id: '', type: triples[3 * i]!, data: triples[3 * i + 1]!, finishes: triples[3 * i + 2]! });
      parts.push(part);
      this.calls.push(part);
    }
    if (this.failNext !== null) {
      const error = this.failNext;
      this.failNext = null;
      throw error;
    }
    return parts.map((part) => {
      const refused = this.refuse.get(part.streamKey);
      if (refused !== undefined) return refused;
      const dead = this.deleted.get(part.deletedKey);
      if (part.fence !== '' && dead !== undefined && Number(part.fence) <= dead) return FENCED_REPLY;
      let seq = (this.seqs.get(part.seqKey) ?? 0) + part.skip;
      const stream = this.streams.get(part.streamKey) ?? [];
      this.streams.set(part.streamKey, stream);
      const finished = this.finished.get(part.finishedKey) ?? new Set<string>();
      this.finished.set(part.finishedKey, finished);
      for (const entry of part.entries) {
        const finish = entry.finishes === 'first' ? '' : entry.finishes;
        if (entry.finishes === 'first') finished.clear();
        if (finish !== '' && finished.has(finish)) continue;
        if (finish !== '') finished.add(finish);
        seq += 1;
        entry.id = `${this.nextId++}-0`;
        entry.data = `{"seq":${seq},${entry.data}`;
        stream.push(entry);
      }
      this.seqs.set(part.seqKey, seq);
      // As the script: ids when asked for (`r`), else how many entries were written.
      if (part.flags.includes('r')) return part.entries.map((entry) => entry.id);
      return part.entries.filter((entry) => entry.id !== '').length;
    });
  }
}
