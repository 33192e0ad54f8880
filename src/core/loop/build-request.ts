import type { Message, StoredMessage } from '../messages.js';
import type { LlmRequest } from '../ports/llm.js';
import { arrangedWindowMessages, sanitizeWindow } from '../window/index.js';
import type { RunContext } from './run-context.js';

/**
 * The model's view of the session: the active window with the compact note (if any) first — it
 * stands for everything before the kept messages, whatever its seq — then the rest in seq order,
 * passed through the sanitizer so the request is protocol-valid even if a row is damaged (I4).
 * `window` is a session's window as it evolves (`ctx.stored.window`): only rows new since the last round
 * are looked at when the window's prefix digest allows (`src/core/window`).
 */
export function windowMessages(window: readonly StoredMessage[]): Message[] {
  return arrangedWindowMessages(window);
}

/** This round's request: the window's messages, the run's tools, prompt and profile settings. */
export function buildRequest(ctx: RunContext): LlmRequest {
  const { messages } = sanitizeWindow(ctx.stored.window);
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
