import type { ToolCall } from '../messages.js';
import type { ToolRegistry } from './tool-registry.js';

/** Consecutive calls of one round that run together: all concurrency-safe, or a single other call. */
export interface ToolBatchSegment {
  /** True when every call is of a concurrency-safe tool and they may overlap. */
  concurrent: boolean;
  /** Positions in the round's calls, in model order. */
  indices: number[];
}

/**
 * Splits a round's calls, in model order, into segments: each maximal run of consecutive calls to
 * concurrency-safe tools is one concurrent segment; every other call (a tool not declared safe, or an
 * unknown tool) is a segment of its own. Segments run one after another, so a non-safe call never
 * overlaps anything and never moves relative to the calls around it.
 */
export function planToolBatch(registry: ToolRegistry, calls: readonly ToolCall[]): ToolBatchSegment[] {
  const segments: ToolBatchSegment[] = [];
  calls.forEach((call, index) => {
    const safe = registry.get(call.name)?.concurrencySafe === true;
    const last = segments[segments.length - 1];
    if (safe && last?.concurrent === true) last.indices.push(index);
    else segments.push({ concurrent: safe, indices: [index] });
  });
  return segments;
}
