/** Small builders for adapter tests against the fake Anthropic server. */
import type { LlmRequest, LlmStreamHandlers } from '../../../src/core/ports/llm.js';
import type { ToolSpec } from '../../../src/core/tools/tool-types.js';

/** A minimal request: one user message, no tools; override any field. */
export function llmRequest(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    sessionId: 's1',
    model: null,
    systemPrompt: null,
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

/** A tool spec as the loop offers it. */
export const ECHO_TOOL: ToolSpec = {
  name: 'echo',
  description: 'Echo the text back',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
};

/** Handlers that record every delta, in order. */
export function recordingHandlers(): LlmStreamHandlers & { text: string[]; thinking: string[] } {
  const text: string[] = [];
  const thinking: string[] = [];
  return { text, thinking, onTextDelta: (delta) => text.push(delta), onThinkingDelta: (delta) => thinking.push(delta) };
}
