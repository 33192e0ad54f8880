import type { AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage } from '../../../../src/core/messages.js';

/** Terse message builders for protocol tests. */
export const user = (text = 'hi'): UserMessage => ({ role: 'user', content: text });
export const system = (text = 'sys'): SystemMessage => ({ role: 'system', content: text });
export const assistant = (...ids: string[]): AssistantMessage =>
  ids.length === 0
    ? { role: 'assistant', content: 'done' }
    : { role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: `tool_${id}`, arguments: '{}' })) };
export const result = (id: string, text = `result ${id}`): ToolMessage => ({ role: 'tool', toolCallId: id, name: `tool_${id}`, content: text });

/** A compact rendering for readable assertions: `u`, `s`, `a(x,y)`, `a`, `t(x)`. */
export function shape(messages: readonly Message[]): string[] {
  return messages.map((message) => {
    if (message.role === 'user') return 'u';
    if (message.role === 'system') return 's';
    if (message.role === 'tool') return `t(${message.toolCallId})`;
    const ids = (message.toolCalls ?? []).map((call) => call.id);
    return ids.length === 0 ? 'a' : `a(${ids.join(',')})`;
  });
}
