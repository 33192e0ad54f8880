/**
 * The request that turns the folded part of a history into a compact note (power-loop's
 * `LLMSummaryFold`). The folded messages are rendered as a plain-text transcript inside one user
 * message rather than replayed as conversation turns: replayed tool calls would require offering the
 * same tools (Anthropic refuses `tool_use` blocks without tool definitions) and would invite the
 * summarizer to call them instead of summarising.
 */
import type { Message, MessageContent } from '../messages.js';
import { compactNoteSummary } from './compact-note.js';

export { compactNoteMessage } from './compact-note.js';

/** A summary request: the system prompt and the messages, as the `Llm` port takes them. */
export interface SummaryRequest {
  systemPrompt: string;
  messages: Message[];
}

/** Options of {@link buildSummaryRequest}. */
export interface SummaryPromptOptions {
  /**
   * Longest rendering of one message, in characters; longer ones keep their head and tail (a tool
   * result's error is usually at the end). Default 4000.
   */
  maxCharsPerMessage?: number;
}

/** The summarizer's instructions: what a compact note must preserve. */
export const SUMMARY_SYSTEM_PROMPT = [
  'You compress the earlier part of a conversation between a user and an AI assistant that uses tools,',
  'so the assistant can continue the work without the original messages.',
  '',
  'Write a faithful, dense summary. Keep:',
  '- the user\'s goals, instructions, constraints and preferences;',
  '- decisions made and the reasons for them;',
  '- facts established, with names, numbers, identifiers, file paths and URLs copied exactly;',
  '- the results of tool calls that still matter, and errors met and how they were resolved;',
  '- open tasks, unanswered questions and next steps, and anything the assistant promised to do.',
  'If the transcript starts with an earlier summary, carry everything in it that still matters into',
  'yours: your summary replaces it. Do not invent anything, do not address the user, and do not call',
  'tools. Reply with the summary text only.',
].join('\n');

/** Builds the request for `messagesToSummarize` (a fold plan's, earlier compact note first). */
export function buildSummaryRequest(messagesToSummarize: readonly Message[], options: SummaryPromptOptions = {}): SummaryRequest {
  const limit = Math.max(200, options.maxCharsPerMessage ?? 4000);
  const transcript = messagesToSummarize.map((message, index) => renderMessage(message, index === 0, limit)).join('\n\n');
  const content = `Summarise this conversation transcript.\n\n<transcript>\n${transcript}\n</transcript>`;
  return { systemPrompt: SUMMARY_SYSTEM_PROMPT, messages: [{ role: 'user', content }] };
}

/** Only a note at the start is an earlier summary; the same tags later are just something a user typed. */
function renderMessage(message: Message, first: boolean, limit: number): string {
  const priorSummary = first ? compactNoteSummary(message) : null;
  if (priorSummary !== null) return `[summary of the conversation before this point]\n${clip(priorSummary, limit * 4)}`;
  switch (message.role) {
    case 'system':
      return `[system]\n${clip(message.content, limit)}`;
    case 'user':
      return `[user${message.name === undefined ? '' : ` ${message.name}`}]\n${clip(render(message.content), limit)}`;
    case 'assistant': {
      const parts = [`[assistant]\n${clip(render(message.content), limit)}`];
      for (const call of message.toolCalls ?? []) {
        parts.push(`[assistant called ${call.name} (${call.id})]\n${clip(call.arguments, limit)}`);
      }
      return parts.join('\n');
    }
    case 'tool': {
      const label = message.isError === true ? 'tool error' : 'tool result';
      return `[${label} from ${message.name} (${message.toolCallId})]\n${clip(render(message.content), limit)}`;
    }
  }
}

function render(content: MessageContent): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('');
}

function clip(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const head = Math.floor(limit * 0.7);
  const tail = limit - head;
  return `${text.slice(0, head)}\n… [${text.length - limit} characters omitted] …\n${text.slice(text.length - tail)}`;
}
