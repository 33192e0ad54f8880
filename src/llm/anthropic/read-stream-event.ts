/**
 * One streamed Messages event, checked and reduced to what the accumulator uses. Pure.
 *
 * The SDK yields whatever JSON an SSE `data:` line held, without checking it: `data: null`, a
 * number or an event without its fields would otherwise surface as a TypeError deep in the
 * accumulator, which the retry policy cannot tell from a bug. Every event must be an object with a
 * string `type`. For the event types the accumulator reads, the fields that carry the answer are
 * checked strictly (a wrong type is `LlmBadResponseError`, naming the event type); optional extras
 * (usage, the model, a `text` on a block start) are read when they have the expected type and
 * ignored otherwise. Other event types (`ping`, ones Anthropic adds later) come back as `ignored`.
 */
import { LlmBadResponseError } from '../../core/errors/index.js';
import type { AnthropicUsageFields } from './map-usage.js';

/** A content block as `content_block_start` opens it. */
export type BlockStart =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  /** redacted_thinking, server tool blocks and future block types: nothing to keep. */
  | { type: 'other' };

/** A `content_block_delta`'s delta; `payload` is its string (text, thinking, signature, JSON fragment). */
export type BlockDelta = { type: 'text_delta' | 'thinking_delta' | 'signature_delta' | 'input_json_delta'; payload: string } | { type: 'other' };

/** A checked event. */
export type StreamEvent =
  | { type: 'message_start'; model: string | null; stopReason: string | null; usage: AnthropicUsageFields | null }
  | { type: 'content_block_start'; index: number; block: BlockStart }
  | { type: 'content_block_delta'; index: number; delta: BlockDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; stopReason: string | null; usage: AnthropicUsageFields | null }
  | { type: 'message_stop' }
  | { type: 'ignored'; name: string };

type Json = Record<string, unknown>;

type KnownDelta = Extract<BlockDelta, { payload: string }>['type'];

/** The field holding the string each known delta type carries. */
const DELTA_PAYLOAD = new Map<string, string>([
  ['text_delta', 'text'],
  ['thinking_delta', 'thinking'],
  ['signature_delta', 'signature'],
  ['input_json_delta', 'partial_json'],
]);

/** Checks one event as the SDK yielded it; throws `LlmBadResponseError` when it is not an event. */
export function readStreamEvent(value: unknown): StreamEvent {
  if (!isObject(value)) throw badStream(`an event is ${describe(value)}, not a JSON object`);
  const type = value.type;
  if (typeof type !== 'string') throw badStream('an event without a string type');
  switch (type) {
    case 'message_start':
      return readMessageStart(value);
    case 'content_block_start': {
      const index = blockIndex(value, type);
      return { type, index, block: readBlockStart(value.content_block, index) };
    }
    case 'content_block_delta':
      return { type, index: blockIndex(value, type), delta: readDelta(value.delta) };
    case 'content_block_stop':
      return { type, index: blockIndex(value, type) };
    case 'message_delta': {
      const delta = value.delta ?? {};
      if (!isObject(delta)) throw badStream('message_delta whose delta is not an object', { eventType: type });
      return { type, stopReason: stopReason(delta.stop_reason, type), usage: usageOf(value.usage) };
    }
    case 'message_stop':
      return { type };
    default:
      return { type: 'ignored', name: type };
  }
}

function readMessageStart(event: Json): StreamEvent {
  const message = event.message;
  if (!isObject(message)) throw badStream('message_start without a message', { eventType: 'message_start' });
  return {
    type: 'message_start',
    model: typeof message.model === 'string' && message.model !== '' ? message.model : null,
    stopReason: stopReason(message.stop_reason, 'message_start'),
    usage: usageOf(message.usage),
  };
}

function readBlockStart(block: unknown, index: number): BlockStart {
  const eventType = 'content_block_start';
  if (!isObject(block) || typeof block.type !== 'string') throw badStream(`${eventType} without a content_block`, { eventType, index });
  switch (block.type) {
    case 'text':
      return { type: 'text', text: initialText(block, 'text', index) };
    case 'thinking':
      return { type: 'thinking', thinking: initialText(block, 'thinking', index) };
    case 'tool_use': {
      const { id, name } = block;
      if (typeof id !== 'string' || typeof name !== 'string' || name === '') throw badStream(`${eventType} of a tool_use block without id or name`, { eventType, index });
      return { type: 'tool_use', id, name, input: block.input };
    }
    default:
      return { type: 'other' };
  }
}

function readDelta(delta: unknown): BlockDelta {
  const eventType = 'content_block_delta';
  if (!isObject(delta) || typeof delta.type !== 'string') throw badStream(`${eventType} without a delta`, { eventType });
  const field = DELTA_PAYLOAD.get(delta.type);
  if (field === undefined) return { type: 'other' }; // citations_delta and future delta types
  const payload = delta[field];
  if (typeof payload !== 'string') throw badStream(`${eventType} (${delta.type}) without its string payload`, { eventType });
  return { type: delta.type as KnownDelta, payload };
}

function blockIndex(event: Json, eventType: string): number {
  const index = event.index;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) throw badStream(`${eventType} without a valid block index`, { eventType });
  return index;
}

/** A stop reason: a string, or null when absent; any other type breaks the protocol. */
function stopReason(value: unknown, eventType: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badStream(`${eventType} whose stop_reason is not a string`, { eventType });
  return value;
}

/** The text a text or thinking block starts with: '' when absent; any other type breaks the protocol. */
function initialText(block: Json, field: 'text' | 'thinking', index: number): string {
  const value = block[field];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw badStream(`content_block_start of a ${field} block whose ${field} is not a string`, { eventType: 'content_block_start', index });
  return value;
}

function usageOf(value: unknown): AnthropicUsageFields | null {
  return isObject(value) ? value : null;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a non-object event is, without its contents (they may hold model output). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/**
 * A malformed-stream error. The event itself is left out: it may hold model output, and error
 * details reach logs and events, where message contents are redacted by default.
 */
export function badStream(problem: string, details: Record<string, unknown> = {}): LlmBadResponseError {
  return new LlmBadResponseError(`malformed Anthropic stream: ${problem}`, { details: { provider: 'anthropic', ...details } });
}
