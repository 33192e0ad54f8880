/**
 * Anthropic's `stop_reason` → the unified {@link FinishReason}. The raw reason is kept
 * beside it in `LlmResponse.rawFinishReason`, so nothing the provider said is lost.
 */
import type { FinishReason } from '../../core/ports/llm.js';

/** The unified reason for each stop reason Anthropic documents. */
const STOP_REASONS: ReadonlyMap<string, FinishReason> = new Map<string, FinishReason>([
  ['end_turn', 'stop'],
  ['stop_sequence', 'stop'],
  ['tool_use', 'tool_calls'],
  ['max_tokens', 'length'],
  // The reply hit the context window rather than `max_tokens`: truncated all the same.
  ['model_context_window_exceeded', 'length'],
  ['refusal', 'content_filter'],
  // A server-side tool loop paused mid-turn; the turn is not finished, but nothing is wrong either.
  ['pause_turn', 'other'],
]);

/** The unified reason and the raw one; an unknown or missing reason is `other`. */
export interface MappedStopReason {
  finishReason: FinishReason;
  rawFinishReason: string | null;
}

/**
 * Maps a stop reason. Unknown values (Anthropic adds new ones from time to time) become `other`
 * rather than an error: the reply itself is still usable.
 */
export function mapStopReason(stopReason: string | null | undefined): MappedStopReason {
  const raw = typeof stopReason === 'string' && stopReason !== '' ? stopReason : null;
  return { finishReason: (raw === null ? undefined : STOP_REASONS.get(raw)) ?? 'other', rawFinishReason: raw };
}
