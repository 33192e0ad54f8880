/**
 * The Messages API's rules for `messages`, as a checker: what Anthropic answers with a 400 when
 * broken. Tests assert that every converted history passes it.
 */
import type { AnthropicMessage } from '../../../../src/llm/anthropic/index.js';

const TOOL_ID = /^[A-Za-z0-9_-]+$/;
const MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** Every rule `messages` breaks, as readable strings; empty when Anthropic would accept it. */
export function anthropicProblems(messages: readonly AnthropicMessage[]): string[] {
  const problems: string[] = [];
  if (messages.length === 0) problems.push('no messages');
  if (messages[0] !== undefined && messages[0].role !== 'user') problems.push('the first message is not a user message');
  const seenIds = new Set<string>();
  let pending: string[] = [];
  messages.forEach((message, i) => {
    const where = `messages.${i} (${message.role})`;
    if (i > 0 && messages[i - 1]!.role === message.role) problems.push(`${where}: same role as the message before`);
    if (message.content.length === 0) problems.push(`${where}: empty content`);
    problems.push(...blockProblems(message, where));
    if (message.role === 'user') {
      problems.push(...resultProblems(message, pending, where));
      pending = [];
    } else {
      if (pending.length > 0) problems.push(`${where}: tool_use ${pending.join(', ')} not answered`);
      pending = toolUseIds(message, seenIds, where, problems);
    }
  });
  if (pending.length > 0) problems.push(`tool_use ${pending.join(', ')} not answered at the end`);
  const last = messages.at(-1);
  const lastBlock = last?.content.at(-1);
  if (last?.role === 'assistant' && lastBlock?.type === 'text' && /\s$/.test(lastBlock.text)) {
    problems.push('final assistant content cannot end with trailing whitespace');
  }
  return problems;
}

function blockProblems(message: AnthropicMessage, where: string): string[] {
  const problems: string[] = [];
  for (const [j, block] of message.content.entries()) {
    if (block.type === 'text' && block.text.trim() === '') problems.push(`${where}.content.${j}: blank text block`);
    if (block.type === 'image') {
      if (message.role !== 'user') problems.push(`${where}.content.${j}: image in an assistant turn`);
      if (block.source.type === 'base64' && !MEDIA_TYPES.has(block.source.media_type)) problems.push(`${where}.content.${j}: bad media type`);
    }
    if (block.type === 'tool_use' && message.role !== 'assistant') problems.push(`${where}.content.${j}: tool_use in a user turn`);
    if (block.type === 'tool_result' && message.role !== 'user') problems.push(`${where}.content.${j}: tool_result in an assistant turn`);
    if (block.type === 'tool_result' && Array.isArray(block.content)) {
      for (const inner of block.content) if (inner.type === 'text' && inner.text.trim() === '') problems.push(`${where}.content.${j}: blank text in tool_result`);
    }
    if (block.type === 'tool_use' && (typeof block.input !== 'object' || block.input === null || Array.isArray(block.input))) {
      problems.push(`${where}.content.${j}: tool_use input is not an object`);
    }
  }
  return problems;
}

function toolUseIds(message: AnthropicMessage, seen: Set<string>, where: string, problems: string[]): string[] {
  const ids: string[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_use') continue;
    if (!TOOL_ID.test(block.id)) problems.push(`${where}: tool_use id "${block.id}" does not match ${TOOL_ID}`);
    if (seen.has(block.id)) problems.push(`${where}: duplicate tool_use id "${block.id}"`);
    seen.add(block.id);
    ids.push(block.id);
  }
  return ids;
}

/** The user turn after an assistant with tool_use: one result per call, results before any other block. */
function resultProblems(message: AnthropicMessage, pending: string[], where: string): string[] {
  const problems: string[] = [];
  const answered = new Set<string>();
  let sawOther = false;
  for (const block of message.content) {
    if (block.type !== 'tool_result') {
      sawOther = true;
      continue;
    }
    if (sawOther) problems.push(`${where}: tool_result after other content`);
    if (!pending.includes(block.tool_use_id)) problems.push(`${where}: tool_result for "${block.tool_use_id}" without a tool_use in the previous turn`);
    if (answered.has(block.tool_use_id)) problems.push(`${where}: second tool_result for "${block.tool_use_id}"`);
    answered.add(block.tool_use_id);
  }
  const missing = pending.filter((id) => !answered.has(id));
  if (missing.length > 0) problems.push(`${where}: no tool_result for ${missing.join(', ')}`);
  return problems;
}
