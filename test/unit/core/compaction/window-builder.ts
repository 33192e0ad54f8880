import type { Message, MessageKind, StoredMessage } from '../../../../src/core/messages.js';

/**
 * Builds stored windows for compaction tests: rows get increasing seqs in the order they are added.
 */
export class WindowBuilder {
  readonly rows: StoredMessage[] = [];
  private nextSeq = 1;
  private nextCall = 1;

  add(message: Message, inputSeq: number | null, kind: MessageKind = 'message'): this {
    this.rows.push({ seq: this.nextSeq++, inputSeq, round: null, kind, state: 'active', message, createdAt: new Date(0) });
    return this;
  }

  system(text = 'notice', inputSeq: number | null = null): this {
    return this.add({ role: 'system', content: text }, inputSeq);
  }

  note(summary: string, inputSeq: number | null = null): this {
    return this.add({ role: 'user', content: `<compact_note>\n${summary}\n</compact_note>` }, inputSeq, 'compact_note');
  }

  /**
   * One input: a user message, `rounds` tool rounds of `callsPerRound` calls each (with their results),
   * and a final answer unless `pending` (then the last round's calls stay unanswered).
   */
  input(inputSeq: number, options: { rounds?: number; callsPerRound?: number; text?: string; pending?: boolean; ids?: string[] } = {}): this {
    const { rounds = 1, callsPerRound = 1, text = 'x'.repeat(40), pending = false } = options;
    this.add({ role: 'user', content: text }, inputSeq);
    for (let round = 0; round < rounds; round += 1) {
      const ids = options.ids ?? Array.from({ length: callsPerRound }, () => `call_${this.nextCall++}`);
      this.add({ role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: 'search', arguments: '{}' })) }, inputSeq);
      const last = round === rounds - 1;
      if (last && pending) return this;
      for (const id of ids) this.add({ role: 'tool', toolCallId: id, name: 'search', content: text }, inputSeq);
    }
    return this.add({ role: 'assistant', content: text }, inputSeq);
  }
}

/** The input seqs whose rows are all in `seqs` / none in `seqs`; a partly folded input is in neither. */
export function inputsFolded(rows: readonly StoredMessage[], seqs: readonly number[]): { whole: number[]; partial: number[] } {
  const folded = new Set(seqs);
  const byInput = new Map<number, boolean[]>();
  for (const row of rows) {
    if (row.inputSeq === null || row.kind === 'compact_note' || row.message.role === 'system') continue;
    const flags = byInput.get(row.inputSeq) ?? [];
    flags.push(folded.has(row.seq));
    byInput.set(row.inputSeq, flags);
  }
  const whole: number[] = [];
  const partial: number[] = [];
  for (const [inputSeq, flags] of byInput) {
    if (flags.every(Boolean)) whole.push(inputSeq);
    else if (flags.some(Boolean)) partial.push(inputSeq);
  }
  return { whole, partial };
}
