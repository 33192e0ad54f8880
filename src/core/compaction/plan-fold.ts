/**
 * Deciding what to fold (docs/agent-loop.md, "Compaction"): when the active window's estimate
 * reaches `contextBudgetTokens × triggerRatio`, the oldest whole inputs are summarised into one compact
 * note, keeping the last `keepLastInputs` inputs verbatim.
 *
 * Folding whole inputs is what keeps tool pairs intact: an input's assistant tool calls and their
 * results belong to it. Should a pair ever straddle two inputs anyway (a result stamped with a later
 * input), the fold boundary moves back until it no longer splits one —
 * an orphan tool result after compaction is a 400 from both providers on every later call.
 */
import { estimateMessagesTokens } from '../budget/index.js';
import { ConfigInvalidError } from '../errors/index.js';
import type { Message, StoredMessage } from '../messages.js';

/** When and how much to fold. */
export interface FoldOptions {
  /** Tokens the active window may use; the model's context minus room for output and tools. */
  contextBudgetTokens: number;
  /** Fold once the estimate reaches this fraction of the budget; (0, 1]. Default 0.75. */
  triggerRatio?: number;
  /** Most recent inputs never folded; at least 1 (the running one). Default 4. */
  keepLastInputs?: number;
}

/** What to fold and what it is worth. */
export interface FoldPlan {
  /** Seqs of the rows to mark compacted, ascending: the folded inputs and any earlier compact note. */
  foldSeqs: number[];
  /** Lowest and highest seq of the folded conversation (earlier notes left out): the audit range. */
  fromSeq: number;
  toSeq: number;
  /** What the summarizer reads, in order: the earlier compact note first, then the folded messages. */
  messagesToSummarize: Message[];
  /** Estimate of the active window now. */
  estimatedTokensBefore: number;
  /** Estimate once the folded rows are gone, before the new note is added. */
  estimatedTokensAfterWithoutNote: number;
}

/** The rows of one input, in window order. */
interface InputGroup {
  inputSeq: number | null;
  rows: StoredMessage[];
}

/**
 * The fold to make now, or null: when the window is under the trigger, or when nothing can be folded
 * (no more inputs than `keepLastInputs`, or every boundary would split a tool pair). System messages
 * are never folded; an active compact note always is, so at most one note stays active.
 */
export function planFold(window: readonly StoredMessage[], options: FoldOptions): FoldPlan | null {
  const { contextBudgetTokens, triggerRatio, keepLastInputs } = resolveFoldOptions(options);
  const active = window.filter((row) => row.state === 'active');
  const estimatedTokensBefore = estimateMessagesTokens(active.map((row) => row.message));
  if (estimatedTokensBefore < contextBudgetTokens * triggerRatio) return null;

  const notes = active.filter((row) => row.kind === 'compact_note');
  const groups = groupInputs(active);
  let foldCount = groups.length - keepLastInputs;
  while (foldCount > 0 && splitsToolPair(groups, foldCount)) foldCount -= 1;
  if (foldCount <= 0) return null;

  const foldedInputRows = new Set(groups.slice(0, foldCount).flatMap((group) => group.rows));
  const foldedRows = [...notes, ...active.filter((row) => foldedInputRows.has(row))];
  const inputSeqs = [...foldedInputRows].map((row) => row.seq);
  const messagesToSummarize = foldedRows.map((row) => row.message);
  return {
    foldSeqs: foldedRows.map((row) => row.seq).sort((a, b) => a - b),
    fromSeq: inputSeqs.reduce((min, seq) => Math.min(min, seq)),
    toSeq: inputSeqs.reduce((max, seq) => Math.max(max, seq)),
    messagesToSummarize,
    estimatedTokensBefore,
    estimatedTokensAfterWithoutNote: estimatedTokensBefore - estimateMessagesTokens(messagesToSummarize),
  };
}

/**
 * The estimate at which {@link planFold} folds: `contextBudgetTokens × triggerRatio`, from the same
 * resolved options, so a caller that knows the window's estimate can skip a window under it. Throws
 * on invalid options, as `planFold` does.
 */
export function foldTriggerTokens(options: FoldOptions): number {
  const { contextBudgetTokens, triggerRatio } = resolveFoldOptions(options);
  return contextBudgetTokens * triggerRatio;
}

function resolveFoldOptions(options: FoldOptions): Required<FoldOptions> {
  const resolved = { triggerRatio: 0.75, keepLastInputs: 4, ...stripUndefined(options) };
  const problems: string[] = [];
  if (!(Number.isFinite(resolved.contextBudgetTokens) && resolved.contextBudgetTokens > 0)) {
    problems.push('contextBudgetTokens must be a number > 0');
  }
  if (!(resolved.triggerRatio > 0 && resolved.triggerRatio <= 1)) problems.push('triggerRatio must be in (0, 1]');
  if (!(Number.isSafeInteger(resolved.keepLastInputs) && resolved.keepLastInputs >= 1)) {
    problems.push('keepLastInputs must be an integer ≥ 1');
  }
  if (problems.length > 0) throw new ConfigInvalidError(`invalid compaction options: ${problems.join('; ')}`, { details: { problems } });
  return resolved;
}

function stripUndefined(options: FoldOptions): FoldOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as unknown as FoldOptions;
}

/**
 * Foldable rows grouped by input, in order of first appearance. System messages and compact notes
 * are not part of any input. A row without an input seq belongs with the row before it: it was
 * written during that input (a legacy or out-of-band row), and attaching it keeps it next to its
 * neighbours — a tool result among them in particular.
 */
function groupInputs(active: readonly StoredMessage[]): InputGroup[] {
  const groups: InputGroup[] = [];
  const byInput = new Map<number, InputGroup>();
  let current: InputGroup | null = null;
  for (const row of active) {
    if (row.message.role === 'system' || row.kind === 'compact_note') continue;
    if (row.inputSeq === null) {
      if (current === null) groups.push((current = { inputSeq: null, rows: [] }));
      current.rows.push(row);
      continue;
    }
    let group = byInput.get(row.inputSeq);
    if (group === undefined) {
      group = { inputSeq: row.inputSeq, rows: [] };
      byInput.set(row.inputSeq, group);
      groups.push(group);
    }
    group.rows.push(row);
    current = group;
  }
  return groups;
}

/**
 * True when folding the first `count` groups would separate a tool call from its result. An id with a
 * call on both sides (a provider that reuses ids like `call_0` every turn) pairs with the call on its
 * own side, so it does not count as split.
 */
function splitsToolPair(groups: readonly InputGroup[], count: number): boolean {
  const folded = toolIds(groups.slice(0, count));
  const kept = toolIds(groups.slice(count));
  const pairsAcross = (results: Set<string>, own: Set<string>, other: Set<string>) =>
    [...results].some((id) => other.has(id) && !own.has(id));
  return pairsAcross(kept.results, kept.calls, folded.calls) || pairsAcross(folded.results, folded.calls, kept.calls);
}

function toolIds(groups: readonly InputGroup[]): { calls: Set<string>; results: Set<string> } {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const group of groups) {
    for (const { message } of group.rows) {
      if (message.role === 'tool') results.add(message.toolCallId);
      if (message.role === 'assistant') for (const call of message.toolCalls ?? []) calls.add(call.id);
    }
  }
  return { calls, results };
}
