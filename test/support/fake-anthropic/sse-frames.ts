/**
 * The server-sent events of a streamed Messages reply, exactly as Anthropic frames them:
 * `event: <type>\ndata: <json>\n\n`, the JSON's `type` repeating the event name.
 */
import type { PromptUsage } from './prompt-cache.js';
import type { FakeBlock, StreamStep } from './steps.js';

/** One event: its name and its data object. */
export interface SseFrame {
  event: string;
  data: Record<string, unknown>;
}

/** The wire form of a frame. */
export function serializeFrame(frame: SseFrame): string {
  return `event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}

/** A frame whose data line is cut off mid-JSON, as a broken proxy might forward it. */
export function malformedFrame(): string {
  return 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n';
}

/** Anthropic's in-stream error event. */
export function errorFrame(errorType: string, message: string): string {
  return serializeFrame({ event: 'error', data: { type: 'error', error: { type: errorType, message } } });
}

/**
 * Every frame of `step`, for a request that asked for `requestedModel`; `seq` makes ids unique. The
 * input figures are `prompt`'s (the server's prompt cache), where the step scripts none.
 */
export function streamFrames(step: StreamStep, requestedModel: string, seq: number, prompt: PromptUsage): SseFrame[] {
  const usage = step.usage ?? {};
  const frames: SseFrame[] = [messageStart(step, requestedModel, seq, prompt)];
  step.blocks.forEach((block, index) => {
    frames.push(frame('content_block_start', { index, content_block: blockStart(block, seq, index) }));
    if (index === 0) frames.push(frame('ping', {}));
    for (const delta of blockDeltas(block)) frames.push(frame('content_block_delta', { index, delta }));
    frames.push(frame('content_block_stop', { index }));
  });
  const stopReason = step.stopReason ?? (step.blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn');
  frames.push(
    frame('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.outputTokens ?? outputTokens(step.blocks) },
    }),
  );
  frames.push(frame('message_stop', {}));
  return frames;
}

function frame(event: string, fields: Record<string, unknown>): SseFrame {
  return { event, data: { type: event, ...fields } };
}

function messageStart(step: StreamStep, requestedModel: string, seq: number, prompt: PromptUsage): SseFrame {
  const usage = step.usage ?? {};
  return frame('message_start', {
    message: {
      id: `msg_fake_${seq}`,
      type: 'message',
      role: 'assistant',
      content: [],
      model: step.model ?? requestedModel,
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.inputTokens ?? prompt.inputTokens,
        cache_creation_input_tokens: usage.cacheCreationInputTokens ?? prompt.cacheCreationInputTokens,
        cache_read_input_tokens: usage.cacheReadInputTokens ?? prompt.cacheReadInputTokens,
        output_tokens: 1,
        service_tier: 'standard',
      },
    },
  });
}

function blockStart(block: FakeBlock, seq: number, index: number): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: '' };
    case 'thinking':
      return { type: 'thinking', thinking: '', signature: '' };
    case 'tool_use':
      return { type: 'tool_use', id: block.id ?? `toolu_fake_${seq}_${index}`, name: block.name, input: {} };
  }
}

function blockDeltas(block: FakeBlock): Record<string, unknown>[] {
  switch (block.type) {
    case 'text':
      return block.chunks.map((text) => ({ type: 'text_delta', text }));
    case 'thinking':
      return [
        ...block.chunks.map((thinking) => ({ type: 'thinking_delta', thinking })),
        { type: 'signature_delta', signature: block.signature ?? 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
      ];
    case 'tool_use':
      return block.inputChunks.map((partial_json) => ({ type: 'input_json_delta', partial_json }));
  }
}

/** A rough output count when the step gives none: a token per chunk, at least one. */
function outputTokens(blocks: FakeBlock[]): number {
  const chunks = blocks.reduce((sum, block) => sum + (block.type === 'tool_use' ? block.inputChunks.length : block.chunks.length), 0);
  return Math.max(1, chunks);
}
