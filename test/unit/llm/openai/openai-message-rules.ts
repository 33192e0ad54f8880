/**
 * The rules the Chat Completions API enforces on `messages` (it answers a violation with a 400), as a
 * checker for tests: every history the loop produces must convert to a list with no violations.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** Every rule `messages` breaks, as strings; empty when the API would accept them. */
export function openAiMessageViolations(messages: readonly ChatCompletionMessageParam[]): string[] {
  const violations: string[] = [];
  let open: { at: number; ids: string[]; answered: Set<string> } | null = null;
  if (messages.length === 0) violations.push('messages is empty');
  messages.forEach((message, at) => {
    if (message.role === 'tool') {
      if (open === null) violations.push(`${at}: tool message without a preceding assistant tool_calls`);
      else if (!open.ids.includes(message.tool_call_id)) violations.push(`${at}: tool_call_id ${message.tool_call_id} answers no call of message ${open.at}`);
      else if (open.answered.has(message.tool_call_id)) violations.push(`${at}: second result for ${message.tool_call_id}`);
      else open.answered.add(message.tool_call_id);
      if (typeof message.content !== 'string' && !message.content.every((part) => part.type === 'text')) violations.push(`${at}: tool content must be text`);
      return;
    }
    if (open !== null) {
      const missing = open.ids.filter((id) => !open!.answered.has(id));
      if (missing.length > 0) violations.push(`${at}: calls ${missing.join(', ')} of message ${open.at} have no tool message`);
      open = null;
    }
    violations.push(...messageShapeViolations(message, at));
    if (message.role === 'assistant' && message.tool_calls !== undefined && message.tool_calls.length > 0) {
      open = { at, ids: message.tool_calls.map((call) => call.id), answered: new Set() };
    }
  });
  if (open !== null) {
    const pending: { at: number; ids: string[]; answered: Set<string> } = open;
    const missing = pending.ids.filter((id) => !pending.answered.has(id));
    if (missing.length > 0) violations.push(`end: calls ${missing.join(', ')} of message ${pending.at} have no tool message`);
  }
  return violations;
}

function messageShapeViolations(message: ChatCompletionMessageParam, at: number): string[] {
  const violations: string[] = [];
  if (message.role === 'system' && typeof message.content !== 'string') violations.push(`${at}: system content must be a string`);
  const name = (message as { name?: unknown }).name;
  if (name !== undefined && (typeof name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(name))) violations.push(`${at}: name must match ^[a-zA-Z0-9_-]{1,64}$`);
  if (message.role === 'user') {
    if (typeof message.content !== 'string') {
      for (const part of message.content) {
        if (part.type === 'text' && typeof part.text !== 'string') violations.push(`${at}: text part without text`);
        else if (part.type === 'image_url' && !/^(https?:|data:image\/)/.test(part.image_url.url)) violations.push(`${at}: bad image url`);
        else if (part.type !== 'text' && part.type !== 'image_url') violations.push(`${at}: unexpected part ${part.type}`);
      }
    }
  }
  if (message.role === 'assistant') {
    const calls = message.tool_calls ?? [];
    if ((message.content === null || message.content === undefined) && calls.length === 0) violations.push(`${at}: assistant without content or tool_calls`);
    if (message.content !== null && message.content !== undefined && typeof message.content !== 'string') violations.push(`${at}: assistant content must be a string here`);
    for (const call of calls) {
      if (call.type !== 'function') violations.push(`${at}: tool call type ${call.type}`);
      else if (call.id === '' || call.function.name === '' || typeof call.function.arguments !== 'string') violations.push(`${at}: incomplete tool call`);
    }
    if (new Set(calls.map((call) => call.id)).size !== calls.length) violations.push(`${at}: duplicate tool call ids`);
  }
  return violations;
}
