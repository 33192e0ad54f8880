import { planFold } from '../../../../src/core/compaction/index.js';
import type { Message, MessageKind, StoredMessage, ToolCall, ToolMessage } from '../../../../src/core/messages.js';

/** A stored row with the fields the window functions read; the rest fixed. */
export function stored(seq: number, message: Message, kind: MessageKind = 'message', inputSeq: number | null = 1): StoredMessage {
  return { seq, inputSeq, round: 0, kind, state: 'active', message, createdAt: new Date(0) };
}

/** A seeded PRNG (mulberry32): the same seed gives the same windows on every run. */
export class Rand {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/**
 * One session's `ctx.window` as the loop and the store evolve it: rows pushed with ever higher seqs,
 * folds that filter rows out and push a compact note, and reloads that hand back the same row
 * objects (the store's window cache) or fresh copies of some of them (rows read again). With
 * `damage` > 0 it also writes what a crash or a misbehaving provider leaves: results missing, out of
 * order, duplicated, orphaned or late, empty and repeated call ids, stray notes, system messages,
 * a calls-pending assistant followed by a user message, an inactive row.
 */
export class SessionSim {
  window: StoredMessage[] = [];
  private nextSeq = 1;
  private nextCall = 1;
  private inputSeq = 0;
  private usedIds: string[] = [];
  private pending: ToolCall[] = [];
  private late: ToolMessage[] = [];
  /** Rows `window[0, loaded)` came from the last load; later rows were pushed in memory. */
  private loaded = 0;

  constructor(
    private readonly rand: Rand,
    private readonly damage: number,
  ) {}

  /** One random change; returns its name. */
  step(): string {
    const rand = this.rand;
    const damaged = rand.chance(this.damage);
    if (this.pending.length > 0 && !damaged) {
      if (rand.chance(0.1)) return this.reload();
      this.results(false);
      return 'results';
    }
    const roll = rand.next();
    if (damaged) return this.damagedStep();
    if (roll < 0.2) return this.input();
    if (roll < 0.55) return this.assistant(false);
    if (roll < 0.6) return this.append({ role: 'system', content: `system ${this.nextSeq}` }, 'message', 'system');
    if (roll < 0.65) return this.append({ role: 'user', content: 'notice' }, 'notice', 'notice');
    if (roll < 0.72) return this.fold();
    if (roll < 0.85) return this.reload();
    return this.input();
  }

  private damagedStep(): string {
    const rand = this.rand;
    switch (rand.int(9)) {
      case 0:
        return this.assistant(true);
      case 1:
        this.results(true);
        return 'results damaged';
      case 2: {
        const result = this.late.shift();
        if (result !== undefined) this.push(result);
        return 'late result';
      }
      case 3: {
        const id = rand.chance(0.5) || this.usedIds.length === 0 ? `orphan_${this.nextSeq}` : rand.pick(this.usedIds);
        this.push({ role: 'tool', toolCallId: id, name: 'search', content: 'stray' });
        return 'orphan result';
      }
      case 4:
        this.push({ role: 'user', content: `<compact_note>\nstray ${this.nextSeq}\n</compact_note>` }, 'compact_note');
        return 'stray note';
      case 5:
        this.pending = [];
        return this.input();
      case 6:
        this.push({ role: 'user', content: 'inactive' }, 'message', 'compacted');
        return 'inactive row';
      case 7:
        this.push({ role: 'system', content: 'system mid-history' });
        return 'system';
      default:
        return this.fold();
    }
  }

  private input(): string {
    this.inputSeq += 1;
    this.push({ role: 'user', content: `question ${this.inputSeq} `.repeat(1 + this.rand.int(4)) }, 'message', 'active', null);
    return 'input';
  }

  private assistant(damaged: boolean): string {
    const rand = this.rand;
    const count = rand.int(4);
    const calls: ToolCall[] = [];
    for (let index = 0; index < count; index += 1) {
      let id = `call_${this.nextCall++}`;
      if (damaged && rand.chance(0.3)) id = '';
      else if (damaged && rand.chance(0.4) && this.usedIds.length > 0) id = rand.pick(this.usedIds);
      else if (damaged && rand.chance(0.3) && calls.length > 0) id = calls[0]!.id;
      calls.push({ id, name: 'search', arguments: `{"q":${rand.int(100)}}` });
      this.usedIds.push(id);
    }
    this.push(calls.length > 0 ? { role: 'assistant', content: '', toolCalls: calls } : { role: 'assistant', content: 'an answer '.repeat(1 + rand.int(5)) });
    this.pending = calls;
    return calls.length > 0 ? 'assistant with calls' : 'assistant';
  }

  private results(damaged: boolean): void {
    const rand = this.rand;
    const results: ToolMessage[] = this.pending.map((call) => ({ role: 'tool', toolCallId: call.id, name: call.name, content: `result of ${call.id}` }));
    this.pending = [];
    if (damaged && results.length > 0) {
      const kind = rand.int(4);
      if (kind === 0) results.reverse();
      if (kind === 1) results.splice(rand.int(results.length), 1);
      if (kind === 2) results.push({ ...rand.pick(results), content: 'again' });
      if (kind === 3) this.late.push(...results.splice(rand.int(results.length), 1));
    }
    for (const result of results) this.push(result);
  }

  /** A fold as the loop makes it (planFold's plan) or a cruder one; then the note, with a new seq. */
  private fold(): string {
    const rand = this.rand;
    const plan = planFold(this.window, { contextBudgetTokens: 1, keepLastInputs: 1 + rand.int(3) });
    let folded: Set<number>;
    if (plan !== null && rand.chance(0.7)) folded = new Set(plan.foldSeqs);
    else {
      const upTo = rand.int(this.window.length + 1);
      const foldable = (row: StoredMessage, index: number) => row.kind === 'compact_note' || (index < upTo && row.message.role !== 'system');
      folded = new Set(this.window.filter(foldable).map((row) => row.seq));
    }
    this.window = this.window.filter((row) => !folded.has(row.seq));
    this.loaded = Math.min(this.loaded, this.window.length);
    this.push({ role: 'user', content: `<compact_note>\nsummary ${this.nextSeq}\n</compact_note>` }, 'compact_note');
    return 'fold';
  }

  /** A new run: the same rows (cache hit), fresh copies of the rows pushed since the last load, or of all. */
  private reload(): string {
    const mode = this.rand.int(4);
    const copy = (row: StoredMessage): StoredMessage => structuredClone(row);
    if (mode === 0) this.window = this.window.map(copy);
    else if (mode === 1) this.window = this.window.map((row, index) => (index >= this.loaded ? copy(row) : row));
    else this.window = this.window.slice();
    this.loaded = this.window.length;
    return `reload ${mode}`;
  }

  /**
   * Another holder of the same session from here on (a run that lost its lease still running): the
   * same rows, then its own appends. Both go on writing seqs above the fork point.
   */
  fork(): SessionSim {
    const other = new SessionSim(this.rand, this.damage);
    Object.assign(other, { ...this, window: this.window.slice(), usedIds: [...this.usedIds], pending: [...this.pending], late: [...this.late] });
    return other;
  }

  private append(message: Message, kind: MessageKind, name: string): string {
    this.push(message, kind);
    return name;
  }

  private push(message: Message, kind: MessageKind = 'message', state: StoredMessage['state'] = 'active', round: number | null = 0): void {
    this.window.push({ ...stored(this.nextSeq++, message, kind, this.inputSeq), round, state });
  }
}
