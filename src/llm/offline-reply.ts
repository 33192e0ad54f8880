import { contentText, type Message } from '../core/messages.js';
import type { LlmRequest } from '../core/ports/llm.js';

/** What the offline model answers: text, or one tool call. */
export type OfflineReply = { text: string } | { toolCalls: { name: string; arguments: string }[] };

/**
 * `/tool <name>` then, optionally, the arguments as JSON. The name follows the providers' rule
 * (1–64 of `A-Z a-z 0-9 _ -`); everything after it, trimmed, is the arguments text.
 */
const TOOL_COMMAND = /^\/tool\s+([A-Za-z0-9_-]{1,64})(?:\s+([\s\S]*))?$/;

/**
 * The offline `scripted` model's answer (docs/llm-providers.md, "Offline model"), decided by the
 * request alone so a replay after a crash answers the same:
 *
 * - the last user message reads `/tool <name> <JSON arguments>` and no tool has answered since: call
 *   that tool with those arguments (`{}` when none). The text goes to the loop as it is, so arguments
 *   that are not JSON or break the schema reach the tool's checks like a real model's would;
 * - tool results came after it: answer `<name> returned: <result>` for each, one per line;
 * - anything else: `Echo: <last user message>` (`Hello from the scripted model.` when there is none).
 *
 * A call that may not use tools (`toolChoice` not `auto`, e.g. the round limit's wrap-up) answers
 * with the echo or the results instead of calling.
 */
export function offlineReply(request: LlmRequest): OfflineReply {
  const lastUser = request.messages.findLastIndex((message) => message.role === 'user');
  if (lastUser < 0) return { text: 'Hello from the scripted model.' };
  const userText = contentText(request.messages[lastUser]!.content);
  const command = TOOL_COMMAND.exec(userText.trim());
  if (command === null) return { text: `Echo: ${userText}` };
  const results = request.messages.slice(lastUser + 1).filter((message) => message.role === 'tool');
  if (results.length > 0) return { text: results.map(resultLine).join('\n') };
  if (request.toolChoice !== 'auto') return { text: `Echo: ${userText}` };
  return { toolCalls: [{ name: command[1]!, arguments: command[2]?.trim() || '{}' }] };
}

function resultLine(message: Message): string {
  const name = message.role === 'tool' ? message.name : 'tool';
  return `${name} returned: ${contentText(message.content)}`;
}
