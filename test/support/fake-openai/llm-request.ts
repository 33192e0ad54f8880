import type { LlmRequest } from '../../../src/core/ports/llm.js';

/** An `LlmRequest` with neutral defaults: one user message, no tools, nothing optional set. */
export function llmRequest(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    sessionId: 's1',
    model: null,
    systemPrompt: 'You are a test.',
    messages: [{ role: 'user', content: 'hi' }],
    cacheBreakpoint: null,
    tools: [],
    toolChoice: null,
    maxTokens: null,
    temperature: null,
    responseFormat: null,
    ...overrides,
  };
}

/** Collects what the stream handlers were called with, in order. */
export function recordingHandlers(): { events: string[]; onTextDelta(text: string): void; onThinkingDelta(text: string): void } {
  const events: string[] = [];
  return {
    events,
    onTextDelta: (text) => events.push(`text:${text}`),
    onThinkingDelta: (text) => events.push(`think:${text}`),
  };
}
