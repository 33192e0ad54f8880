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
    sessionId: ctx.params.sessionId,
    model: ctx.profile.model,
    systemPrompt: ctx.systemPrompt,
    messages,
    cacheBreakpoint: previousInputEnd(ctx.stored.window, messages, ctx.params.input.seq),
    tools,
    toolChoice: tools.length > 0 ? 'auto' : null,
    maxTokens: ctx.profile.maxOutputTokens,
    temperature: ctx.profile.temperature,
    responseFormat: ctx.profile.responseFormat,
  };
}

/**
 * The index in `messages` (the view of `window`) of the last message an earlier input than
 * `inputSeq` wrote, or null when there is none (`LlmRequest.cacheBreakpoint`). Rows of this input,
 * and of inputs steered into it, have a seq of at least `inputSeq`; a row with no input is an
 * earlier one's; folded rows are not sent. The sanitizer returns untouched messages by reference, so the row's message is
 * found by identity, looking back from the end: a round pays for this input's rows, not the window.
 * A message the sanitizer had to rewrite is not found: the call then goes without that breakpoint.
 */
export function previousInputEnd(window: readonly StoredMessage[], messages: readonly Message[], inputSeq: number): number | null {
  let row = window.length - 1;
  while (row >= 0 && (window[row]!.state === 'compacted' || (window[row]!.inputSeq ?? 0) >= inputSeq)) row -= 1;
  if (row < 0) return null;
  const anchor = window[row]!.message;
  const index = messages.lastIndexOf(anchor);
  return index === -1 ? null : index;
}
