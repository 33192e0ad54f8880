import type { StoredMessage } from '../messages.js';
import { picoToUsd } from '../pricing/index.js';
import type { Usage, UsageCounts, UsageRoundRecord } from '../session-types.js';

/**
 * What earlier attempts of an input left in the store: the usage of its recorded rounds (one usage
 * row per round; a redone round replaced its row), how many rounds that is, and its tool results in
 * the active window. A resumed run counts on from here; an input given up reports it as its result,
 * so the session's stats still count what it consumed.
 */
export interface RecordedProgress {
  usage: Usage;
  /** Rounds recorded: one past the highest recorded round index (0 when none). */
  rounds: number;
  /** Successful tool results of the input in the window. */
  toolCalls: number;
}

/** Sums `usageRows` (the input's own) and counts the input's tool results in `window`. */
export function recordedProgress(inputSeq: number, window: readonly StoredMessage[], usageRows: readonly UsageRoundRecord[]): RecordedProgress {
  return Object.assign(recordedUsage(usageRows), { toolCalls: countToolCalls(window, inputSeq) });
}

/** The usage of an input's recorded rounds, summed, and how many rounds that is (its usage rows alone). */
export function recordedUsage(usageRows: readonly UsageRoundRecord[]): Omit<RecordedProgress, 'toolCalls'> {
  const usage = zeroUsage();
  let rounds = 0;
  for (const row of usageRows) {
    addCounts(usage, row);
    addCost(usage, row.costPicoUsd);
    rounds = Math.max(rounds, row.round + 1);
  }
  return { usage, rounds };
}

/** A usage of nothing, to add to. */
export function zeroUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 0, costUsd: 0, costPicoUsd: 0 };
}

/** Adds the counts of `part` (a usage, or a usage row) to `total`; the cost is {@link addCost}'s. */
export function addCounts(total: Usage, part: UsageCounts): void {
  total.promptTokens += part.promptTokens;
  total.completionTokens += part.completionTokens;
  total.cachedTokens += part.cachedTokens;
  total.cacheWriteTokens += part.cacheWriteTokens;
  total.reasoningTokens += part.reasoningTokens;
  total.totalTokens += part.totalTokens;
  total.llmCalls += part.llmCalls;
}

/**
 * Adds one call's cost in picodollars to `total` (USD follows from the exact sum); null — a model
 * with no price — counts an unpriced call instead.
 */
export function addCost(total: Usage, costPicoUsd: number | null): void {
  if (costPicoUsd === null) {
    total.unpricedCalls = (total.unpricedCalls ?? 0) + 1;
    return;
  }
  total.costPicoUsd += costPicoUsd;
  total.costUsd = picoToUsd(total.costPicoUsd);
}

/** Adds the cost of `part`, a usage (a child's result), to `total`. */
export function addUsageCost(total: Usage, part: Pick<Usage, 'costPicoUsd' | 'unpricedCalls'>): void {
  total.costPicoUsd += part.costPicoUsd;
  total.costUsd = picoToUsd(total.costPicoUsd);
  if ((part.unpricedCalls ?? 0) > 0) total.unpricedCalls = (total.unpricedCalls ?? 0) + (part.unpricedCalls ?? 0);
}

/** Tool results this input already has (a resumed run keeps counting from there). */
function countToolCalls(window: readonly StoredMessage[], inputSeq: number): number {
  return window.filter((row) => row.inputSeq === inputSeq && row.kind === 'message' && row.message.role === 'tool' && row.message.isError !== true).length;
}
