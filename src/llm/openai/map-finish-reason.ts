/**
 * Chat Completions `finish_reason` → the unified {@link FinishReason}. Pure. The raw reason is kept
 * beside the unified one by the caller (`LlmResponse.rawFinishReason`).
 */
import type { FinishReason } from '../../core/ports/llm.js';

/**
 * `stop` → `stop`; `tool_calls` and the deprecated `function_call` → `tool_calls`; `length` →
 * `length`; `content_filter` → `content_filter`; anything else (a compatible endpoint's own reason,
 * or none at all) → `other`.
 */
export function mapFinishReason(raw: string | null): FinishReason {
  switch (raw) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}
