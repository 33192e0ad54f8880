import { arrangeWindow } from '../compaction/index.js';
import { sanitizeHistory } from '../history/index.js';
import type { Message, StoredMessage } from '../messages.js';
import type { LlmRequest } from '../ports/llm.js';
import type { RunContext } from './run-context.js';

/**
 * The model's view of the session: the active window with the compact note (if any) first — it
 * stands for everything before the kept messages, whatever its seq — then the rest in seq order,
 * passed through the sanitizer so the request is protocol-valid even if a row is damaged (I4).
 */
export function windowMessages(window: readonly StoredMessage[]): Message[] {
  return arrangeWindow(window).map((row) => row.message);
}

export function buildRequest(ctx: RunContext): LlmRequest {
  const { messages } = sanitizeHistory(windowMessages(ctx.window));
  const tools = ctx.tools.specs();
  return {
    model: ctx.profile.model,
    systemPrompt: ctx.systemPrompt,
    messages,
    tools,
    toolChoice: tools.length > 0 ? 'auto' : null,
    maxTokens: ctx.profile.maxOutputTokens,
    temperature: ctx.profile.temperature,
    responseFormat: ctx.profile.responseFormat,
  };
}
